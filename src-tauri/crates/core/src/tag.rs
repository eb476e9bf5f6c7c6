//! Caller tags: `x-switchyard-tag-NAME: value` request headers, read by the relay and stored
//! with each attempt for reconciliation (`usage --by tag`), never forwarded upstream. Bounded:
//! at most [`MAX_TAGS`] tags, names of 1–32 characters `a-z 0-9 _ -`, values of 1–128
//! printable ASCII characters that do not look like a key, even loosely written
//! (`secret_shape::looks_like_secret_in_free_text`). Anything over a limit is refused as
//! a whole (the relay answers 400 `invalid_tag` and sends nothing). Pure.

use std::collections::BTreeMap;

use crate::secret_shape::looks_like_secret_in_free_text;
use crate::InvalidInput;

/// The request header prefix of a tag (header names arrive lower-case).
pub const TAG_PREFIX: &str = "x-switchyard-tag-";
pub const MAX_TAGS: usize = 8;
pub const MAX_TAG_NAME_LEN: usize = 32;
pub const MAX_TAG_VALUE_LEN: usize = 128;

/// A request's tags, by name.
pub type Tags = BTreeMap<String, String>;

/// Reads the tags among `headers` (name, raw value); other headers are ignored. The error
/// names the header (never the value, which may have been pasted by mistake).
pub fn read_tags<'a>(headers: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Result<Tags, InvalidInput> {
    let mut tags = Tags::new();
    for (name, value) in headers {
        let Some(tag) = name.strip_prefix(TAG_PREFIX) else { continue };
        let field = || format!("{TAG_PREFIX}{}", if valid_name(tag) { tag } else { "NAME" });
        if !valid_name(tag) {
            return Err(InvalidInput::new(
                field(),
                format!("a tag name is 1-{MAX_TAG_NAME_LEN} characters of a-z, 0-9, _ and -"),
            ));
        }
        let text = std::str::from_utf8(value).ok().filter(|v| valid_value(v)).ok_or_else(|| {
            InvalidInput::new(field(), format!("a tag value is 1-{MAX_TAG_VALUE_LEN} printable ASCII characters"))
        })?;
        if looks_like_secret_in_free_text(text) {
            return Err(InvalidInput::new(
                field(),
                "the value looks like a key or token; tags are stored in the ledger",
            ));
        }
        if tags.insert(tag.to_string(), text.to_string()).is_some() {
            return Err(InvalidInput::new(field(), "given more than once"));
        }
        if tags.len() > MAX_TAGS {
            return Err(InvalidInput::new("x-switchyard-tag-*", format!("at most {MAX_TAGS} tags per request")));
        }
    }
    Ok(tags)
}

/// The stored form: a JSON object, or `None` without tags.
pub fn tags_json(tags: &Tags) -> Option<String> {
    if tags.is_empty() {
        None
    } else {
        serde_json::to_string(tags).ok()
    }
}

/// The stored form read back; text that is not an object of strings reads as no tags.
pub fn parse_tags_json(stored: Option<&str>) -> Tags {
    stored.and_then(|s| serde_json::from_str(s).ok()).unwrap_or_default()
}

fn valid_name(name: &str) -> bool {
    (1..=MAX_TAG_NAME_LEN).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

fn valid_value(value: &str) -> bool {
    (1..=MAX_TAG_VALUE_LEN).contains(&value.len()) && value.bytes().all(|b| (0x20..=0x7e).contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(headers: &[(&str, &str)]) -> Result<Tags, InvalidInput> {
        read_tags(headers.iter().map(|(n, v)| (*n, v.as_bytes())))
    }

    #[test]
    fn tags_are_read_by_name_and_other_headers_ignored() {
        let tags = read(&[("x-switchyard-tag-job", "nightly-42"), ("x-switchyard-turn", "t"), ("accept", "*/*")]);
        assert_eq!(tags, Ok(Tags::from([("job".into(), "nightly-42".into())])), "only the tag prefix counts");
        assert_eq!(tags_json(&tags.unwrap_or_default()).as_deref(), Some(r#"{"job":"nightly-42"}"#));
        assert_eq!(tags_json(&Tags::new()), None, "no tags, no column value");
    }

    #[test]
    fn over_limit_tags_are_refused_with_the_header_named() {
        let nine: Vec<(String, String)> = (0..9).map(|i| (format!("x-switchyard-tag-t{i}"), "v".to_string())).collect();
        let nine: Vec<(&str, &str)> = nine.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        assert!(read(&nine[..8]).is_ok(), "8 tags are allowed");
        assert_eq!(read(&nine).map_err(|e| e.field), Err("x-switchyard-tag-*".into()), "a ninth is refused");
        let long_name = format!("x-switchyard-tag-{}", "a".repeat(33));
        assert!(read(&[(long_name.as_str(), "v")]).is_err(), "a 33-character name is refused");
        assert!(read(&[("x-switchyard-tag-Job", "v")]).is_err(), "upper case is not a tag name");
        assert!(read(&[("x-switchyard-tag-", "v")]).is_err(), "an empty name is refused");
        let long_value = "v".repeat(129);
        assert!(read(&[("x-switchyard-tag-a", long_value.as_str())]).is_err(), "a 129-character value is refused");
        assert!(read(&[("x-switchyard-tag-a", &"v".repeat(128))]).is_ok(), "128 characters are allowed");
        assert!(read(&[("x-switchyard-tag-a", "")]).is_err(), "an empty value is refused");
        assert!(read(&[("x-switchyard-tag-a", "caf\u{e9}")]).is_err(), "non-ASCII is refused");
        assert!(read(&[("x-switchyard-tag-a", "x"), ("x-switchyard-tag-a", "y")]).is_err(), "twice is refused");
    }

    #[test]
    fn a_value_that_looks_like_a_key_is_refused_and_not_repeated() {
        let canary = "sk-ant-api03-CANARYcanary0123456789abcdefghijklmnop";
        let e = read(&[("x-switchyard-tag-job", canary)]).err();
        let text = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("x-switchyard-tag-job"), "the error names the header: {text}");
        assert!(!text.contains("CANARY"), "the error never repeats the value: {text}");
    }

    #[test]
    fn key_shapes_that_evaded_the_check_are_refused() {
        for (what, value) in [
            ("30-character hex", "0123456789abcdef0123456789abcd"),
            ("an AWS access key id", "AKIAIOSFODNN7EXAMPLE"),
            ("a temporary AWS key id", "ASIAY34FZKBOKMUTVV7A"),
            ("a spaced sk key", "sk live 4f3a9c1e7b2d"),
            ("a dotted sk key", "sk.proj.4f3a9c1e7b2d"),
            ("a spaced key after other words", "key is sk ant api03"),
            ("a Slack app token", "xapp-1-A0123BCDE-4567890123"),
        ] {
            assert!(read(&[("x-switchyard-tag-job", value)]).is_err(), "{what} ({value}) is refused as a tag value");
        }
        for fine in [
            "nightly-42",
            "job 7",
            "x y",
            "123e4567-e89b-12d3-a456-426614174000",
            "2025-05-14",
            "3f2a9c1",
            "task.force",
            "risk level",
        ] {
            assert!(read(&[("x-switchyard-tag-job", fine)]).is_ok(), "{fine}: an ordinary tag value");
        }
    }

    #[test]
    fn stored_text_round_trips_and_junk_reads_as_none() {
        let tags = Tags::from([("a".into(), "1".into()), ("b".into(), "x y".into())]);
        assert_eq!(parse_tags_json(tags_json(&tags).as_deref()), tags);
        assert_eq!(parse_tags_json(Some("[1]")), Tags::new());
        assert_eq!(parse_tags_json(None), Tags::new());
    }
}
