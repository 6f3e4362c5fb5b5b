//! Text normalisation before matching: full-width ASCII folded, case lowered, zero-width
//! characters and soft hyphens removed, whitespace runs collapsed (and dropped next to CJK),
//! with a map from each output byte back to its byte offset in the original.
//!
//! It owns no patterns; the matchers in the sibling modules read its output.

pub(super) fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x2E80..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// Normalises `s` into `out`; `map[i]` is the byte offset in `s` of `out`'s byte `i`.
pub(super) fn normalise(s: &str, out: &mut String, map: &mut Vec<usize>) {
    out.clear();
    map.clear();
    if s.is_ascii() {
        return normalise_ascii(s.as_bytes(), out, map);
    }
    let mut space: Option<usize> = None;
    let mut prev: Option<char> = None;
    for (i, c) in s.char_indices() {
        if c.is_ascii() && !c.is_ascii_whitespace() && c != '\x0b' {
            if let (Some(at), Some(p)) = (space.take(), prev) {
                if !is_cjk(p) {
                    out.push(' ');
                    map.push(at);
                }
            }
            out.push(c.to_ascii_lowercase());
            map.push(i);
            prev = Some(c);
            continue;
        }
        let c = match c as u32 {
            0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            0x3000 => ' ',
            _ => c,
        };
        if matches!(
            c,
            '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}'
        ) {
            continue;
        }
        if c.is_whitespace() {
            space.get_or_insert(i);
            continue;
        }
        if let (Some(at), Some(p)) = (space.take(), prev) {
            if !is_cjk(p) && !is_cjk(c) {
                out.push(' ');
                map.push(at);
            }
        }
        if is_cjk(c) {
            // Caseless: no need for the lower-case tables.
            out.push(c);
            map.extend(std::iter::repeat_n(i, c.len_utf8()));
            prev = Some(c);
            continue;
        }
        for l in c.to_lowercase() {
            let before = out.len();
            out.push(l);
            map.extend(std::iter::repeat_n(i, out.len() - before));
        }
        prev = Some(c);
    }
}

/// [`normalise`] for ASCII text (the common case): no full-width forms, zero-width
/// characters or CJK, so only case and whitespace.
fn normalise_ascii(s: &[u8], out: &mut String, map: &mut Vec<usize>) {
    let mut space: Option<usize> = None;
    let mut any = false;
    for (i, &c) in s.iter().enumerate() {
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C) {
            space.get_or_insert(i);
            continue;
        }
        if let Some(at) = space.take() {
            if any {
                out.push(' ');
                map.push(at);
            }
        }
        out.push(char::from(c.to_ascii_lowercase()));
        map.push(i);
        any = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_maps_offsets() {
        let s = "Ａ\u{200B}  ＢC 中 文";
        let (mut n, mut m) = (String::new(), Vec::new());
        normalise(s, &mut n, &mut m);
        assert_eq!(n, "a bc中文");
        assert_eq!(n.len(), m.len());
        assert_eq!(m[1], s.find(' ').unwrap());
    }

    #[test]
    fn ascii_fast_path_agrees_with_the_general_path() {
        for s in [
            "  Ignore\t\tALL  previous\r\ninstructions ",
            "",
            " ",
            "a\x0bb",
            "X.Y  z",
        ] {
            let (mut fast, mut fm) = (String::new(), Vec::new());
            normalise(s, &mut fast, &mut fm);
            // The general path, forced by a trailing non-ASCII character, then cut back.
            let (mut slow, mut sm) = (String::new(), Vec::new());
            normalise(&format!("{s}é"), &mut slow, &mut sm);
            slow.pop();
            sm.truncate(slow.len());
            if slow.ends_with(' ') {
                slow.pop();
                sm.pop();
            }
            assert_eq!((fast, fm), (slow, sm), "{s:?}");
        }
    }
}
