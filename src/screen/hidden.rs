//! Hidden text: characters that hide text from a person reading it (zero-width, bidi
//! controls, tag characters, terminal escapes). A finding of its own wherever text must be
//! read by a person before it is trusted (tool definitions).

/// The hidden-text finding ids of [`hidden_text`].
///
/// # Example
/// ```
/// use jsongate::screen::{hidden_text, HIDDEN_PATTERNS};
/// assert!(HIDDEN_PATTERNS.contains(&"hidden_zero_width"));
/// let (id, offset) = hidden_text("run\u{200b}this").unwrap();
/// assert!(HIDDEN_PATTERNS.contains(&id)); // every id `hidden_text` reports is listed
/// assert_eq!((id, offset), ("hidden_zero_width", 3));
/// ```
pub const HIDDEN_PATTERNS: &[&str] = &[
    "hidden_zero_width",
    "hidden_bidi_control",
    "hidden_tag_character",
    "hidden_ansi_escape",
];

/// The first character of `s` that hides text from a person reading it, with its byte
/// offset: zero-width and invisible formatting characters (U+200B–U+200D, U+2060–U+2064,
/// U+FEFF, U+180E, U+00AD), bidirectional controls (U+200E, U+200F, U+061C,
/// U+202A–U+202E, U+2066–U+2069), tag characters (U+E0000–U+E007F, which spell ASCII
/// invisibly) and terminal escape sequences (ESC, U+001B, and the C1 control sequence
/// introducer U+009B). These are findings of their own wherever text must be read by a
/// person before it is trusted (tool definitions); the phrase screening above removes
/// zero-width characters before matching instead.
///
/// # Example
/// ```
/// use jsongate::screen::hidden_text;
/// assert_eq!(hidden_text("read\u{200B}me"), Some(("hidden_zero_width", 4)));
/// assert_eq!(hidden_text("\u{1b}[8mhidden"), Some(("hidden_ansi_escape", 0)));
/// assert_eq!(hidden_text("plain text, 中文"), None);
/// ```
pub fn hidden_text(s: &str) -> Option<(&'static str, usize)> {
    if s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) || b == b'\t' || b == b'\n' || b == b'\r')
    {
        return None;
    }
    s.char_indices().find_map(|(i, c)| {
        let id = match c as u32 {
            0x200B..=0x200D | 0x2060..=0x2064 | 0xFEFF | 0x180E | 0x00AD => HIDDEN_PATTERNS[0],
            0x200E | 0x200F | 0x061C | 0x202A..=0x202E | 0x2066..=0x2069 => HIDDEN_PATTERNS[1],
            0xE0000..=0xE007F => HIDDEN_PATTERNS[2],
            0x1B | 0x9B => HIDDEN_PATTERNS[3],
            _ => return None,
        };
        Some((id, i))
    })
}
