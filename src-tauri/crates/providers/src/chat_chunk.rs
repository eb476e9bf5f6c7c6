//! What a chat-completions stream chunk is for failover: an error, content (a delta with
//! text, a refusal or tool calls), a preamble (a role-only delta), or other (no choices).
//! Read straight off the chunk's JSON — nothing is built: a `serde_json::Value` per chunk made
//! this ~10k instructions per chunk, and every chunk before the first content is read (the
//! relay's watch over a legacy stream did it on every request).
//!
//! It reads as a reader of the chunk as a `Value` would (`tests/chat_chunk_role.rs` checks
//! it against that reading): any `error` key makes it an error; `choices` must be an array;
//! in a choice's `delta` object, `content`, `tool_calls` and `refusal` count when they are a
//! non-empty string or array, `function_call` when present at all; a repeated key counts as
//! its last value; a chunk that is not JSON, or not an object, is other.

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::lenient::{deserialize_leniently, Shapes};
use crate::sse::EventRole;

/// The role of one chunk's data.
pub fn chunk_role(data: &str) -> EventRole {
    let Ok(chunk) = serde_json::from_str::<Chunk>(data) else {
        return EventRole::Other;
    };
    match chunk {
        Chunk { error: true, .. } => EventRole::Error,
        Chunk { choices: Some(Choices { any: true, content: true }), .. } => EventRole::Content,
        Chunk { choices: Some(Choices { any: true, content: false }), .. } => EventRole::Preamble,
        Chunk { .. } => EventRole::Other,
    }
}

#[derive(Default)]
struct Chunk {
    error: bool,
    /// `None` when there is no `choices` array.
    choices: Option<Choices>,
}

#[derive(Default, Clone, Copy)]
struct Choices {
    /// The array has an element.
    any: bool,
    /// An element's delta carries content.
    content: bool,
}

impl<'de> Shapes<'de> for Chunk {
    fn object<A: MapAccess<'de>>(mut map: A) -> Result<Chunk, A::Error> {
        let mut chunk = Chunk::default();
        while let Some(key) = map.next_key::<Key>()? {
            match key.0.as_ref() {
                "error" => {
                    map.next_value::<IgnoredAny>()?;
                    chunk.error = true;
                }
                "choices" => chunk.choices = map.next_value::<ChoicesValue>()?.0,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(chunk)
    }
}

/// `choices`: `Some` only for an array.
#[derive(Default)]
struct ChoicesValue(Option<Choices>);

impl<'de> Shapes<'de> for ChoicesValue {
    fn array<A: SeqAccess<'de>>(mut seq: A) -> Result<ChoicesValue, A::Error> {
        let mut choices = Choices::default();
        while let Some(choice) = seq.next_element::<Choice>()? {
            choices.any = true;
            choices.content |= choice.0;
        }
        Ok(ChoicesValue(Some(choices)))
    }
}

/// One choice: whether its `delta` carries content.
#[derive(Default)]
struct Choice(bool);

impl<'de> Shapes<'de> for Choice {
    fn object<A: MapAccess<'de>>(mut map: A) -> Result<Choice, A::Error> {
        let mut content = false;
        while let Some(key) = map.next_key::<Key>()? {
            if key.0 == "delta" {
                content = map.next_value::<Delta>()?.0;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Choice(content))
    }
}

/// A delta: whether it carries content.
#[derive(Default)]
struct Delta(bool);

impl<'de> Shapes<'de> for Delta {
    fn object<A: MapAccess<'de>>(mut map: A) -> Result<Delta, A::Error> {
        // content, tool_calls, refusal: each its last value's; function_call: present.
        let mut has = [false; 3];
        let mut function_call = false;
        while let Some(key) = map.next_key::<Key>()? {
            let slot = match key.0.as_ref() {
                "content" => 0,
                "tool_calls" => 1,
                "refusal" => 2,
                other => {
                    function_call |= other == "function_call";
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            has[slot] = map.next_value::<NonEmpty>()?.0;
        }
        Ok(Delta(function_call || has.contains(&true)))
    }
}

/// A non-empty string or array.
#[derive(Default)]
struct NonEmpty(bool);

impl<'de> Shapes<'de> for NonEmpty {
    fn text(v: &str) -> NonEmpty {
        NonEmpty(!v.is_empty())
    }

    fn array<A: SeqAccess<'de>>(mut seq: A) -> Result<NonEmpty, A::Error> {
        let mut any = false;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            any = true;
        }
        Ok(NonEmpty(any))
    }
}

deserialize_leniently!(Chunk, ChoicesValue, Choice, Delta, NonEmpty);

/// A key, borrowed when it has no escapes.
struct Key<'de>(std::borrow::Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> Visitor<'de> for Text {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(Text)
    }
}
