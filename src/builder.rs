//! The builder style every configuration type of the crate follows (the style of
//! [`Limits`](crate::Limits)): private fields, consuming setters named after the field, and
//! `get_` readers. These macros write the setters and readers that are plain assignments and
//! copies; setters that convert or clamp their value are written out where they are.
//!
//! Declared before every other module (`#[macro_use]`), so that each layer can use them.
//! Only the layers behind features use them; a build of the core alone does not.

/// Consuming setters, one per field: `$field(value)` sets the field to `value`.
#[allow(unused_macros)]
macro_rules! config_setters {
    ($($(#[$doc:meta])* $field:ident: $ty:ty;)*) => {$(
        $(#[$doc])*
        #[must_use]
        pub fn $field(mut self, value: $ty) -> Self {
            self.$field = value;
            self
        }
    )*};
}

/// Setters of optional fields: `$field(value)` sets the field to `Some(value)`.
#[allow(unused_macros)]
macro_rules! config_options {
    ($($(#[$doc:meta])* $field:ident: $ty:ty;)*) => {$(
        $(#[$doc])*
        #[must_use]
        pub fn $field(mut self, value: $ty) -> Self {
            self.$field = Some(value);
            self
        }
    )*};
}

/// Readers of fields whose value is `Copy`: `$get()` returns the field.
#[allow(unused_macros)]
macro_rules! config_readers {
    ($($(#[$doc:meta])* $field:ident, $get:ident: $ty:ty;)*) => {$(
        $(#[$doc])*
        pub fn $get(&self) -> $ty {
            self.$field
        }
    )*};
}
