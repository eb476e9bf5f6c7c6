//! JSON read the way a reader of a `serde_json::Value` would, without building one: a reader
//! ([`Shapes`]) says which shapes of a value it takes — an object, an array, a string, an
//! integer — and every other shape is skipped and reads as its `Default`. `usage.rs` and
//! `chat_chunk.rs` read the relay's per-request JSON this way (a `Value` there was an
//! allocation per node, on every answer and every streamed chunk before the first content);
//! [`may_spell`] tells from the bytes alone whether a parse could find what it looks for.

use std::marker::PhantomData;

use serde::de::{Error, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Whether JSON text can spell `text` at all, in a key or a string: it holds `text` as
/// written, or a `\u` escape that could write it another way. A pre-check that spares a parse
/// looking for `text` in a document that cannot hold it (a memchr pass over the bytes).
pub fn may_spell(json: &[u8], text: &[u8]) -> bool {
    memchr::memmem::find(json, text).is_some() || has_unicode_escape(json)
}

/// [`may_spell`] with the searcher for `text` built once (`memmem::find` builds one per call:
/// ~300 instructions, twice per routed answer before these; issue 40).
pub fn may_spell_with(json: &[u8], text: &memchr::memmem::Finder<'_>) -> bool {
    text.find(json).is_some() || has_unicode_escape(json)
}

/// A backslash followed by `u` anywhere (what `memmem::find(json, b"\\u")` says, without
/// building a searcher).
fn has_unicode_escape(json: &[u8]) -> bool {
    memchr::memchr_iter(b'\\', json).any(|i| json.get(i + 1) == Some(&b'u'))
}

/// The shapes a lenient reader takes; the defaults skip the value and read as `Default`.
pub(crate) trait Shapes<'de>: Default {
    fn object<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Self::default())
    }

    fn array<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Self::default())
    }

    fn text(_: &str) -> Self {
        Self::default()
    }

    /// An integer; `None` when it does not fit `i64` (as `Value::as_i64` says).
    fn integer(_: Option<i64>) -> Self {
        Self::default()
    }
}

/// `Deserialize` for lenient readers: any value, through [`Shapes`].
macro_rules! deserialize_leniently {
    ($($reader:ty),+ $(,)?) => {$(
        impl<'de> serde::Deserialize<'de> for $reader {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any($crate::lenient::Lenient::new())
            }
        }
    )+};
}
pub(crate) use deserialize_leniently;

/// The visitor behind [`deserialize_leniently`].
pub(crate) struct Lenient<T>(PhantomData<T>);

impl<T> Lenient<T> {
    pub(crate) fn new() -> Self {
        Lenient(PhantomData)
    }
}

impl<'de, T: Shapes<'de>> Visitor<'de> for Lenient<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::object(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        T::array(seq)
    }

    fn visit_str<E: Error>(self, v: &str) -> Result<T, E> {
        Ok(T::text(v))
    }

    fn visit_i64<E: Error>(self, v: i64) -> Result<T, E> {
        Ok(T::integer(Some(v)))
    }

    fn visit_u64<E: Error>(self, v: u64) -> Result<T, E> {
        Ok(T::integer(i64::try_from(v).ok()))
    }

    fn visit_f64<E: Error>(self, _: f64) -> Result<T, E> {
        Ok(T::default())
    }

    fn visit_bool<E: Error>(self, _: bool) -> Result<T, E> {
        Ok(T::default())
    }

    fn visit_unit<E: Error>(self) -> Result<T, E> {
        Ok(T::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_escape_check_is_the_substring_search(bytes in proptest::collection::vec(prop_oneof![Just(b'\\'), Just(b'u'), Just(b'"'), Just(b'a')], 0..40)) {
            prop_assert_eq!(has_unicode_escape(&bytes), memchr::memmem::find(&bytes, b"\\u").is_some());
            let finder = memchr::memmem::Finder::new(b"\"a");
            prop_assert_eq!(may_spell_with(&bytes, &finder), may_spell(&bytes, b"\"a"), "the built searcher answers as the one-shot search");
        }
    }
}
