//! Checks of a typed document that serde cannot express: unique refs, slugs and labels, one
//! primary per connection, ranges, URLs and non-secret headers. Each error names its path.
//! Checks reuse `validate.rs` and `header.rs` (the one header rule, [`Header::new`]) and move
//! their field name into the path. Errors name the path, never the offending text.

use std::collections::BTreeMap;

use crate::header::Header;
use crate::profile::{check_credential, parse_expiry, CredentialSpec};
use crate::secret_shape::echo_safe;
use crate::validate::{
    normalize_base_url, validate_label, validate_model, validate_priority, validate_slug, validate_weight, InvalidInput,
};

use super::format::{ConnectionEntry, Document, ProfileEntry};

/// Longest export-local reference.
pub const MAX_REF_LEN: usize = 32;

/// Checks every rule of format v1 on `doc` and normalises it (lower-case header names,
/// base URLs without trailing slash), so an imported definition equals a typed-in one.
pub fn check(doc: &mut Document) -> Result<(), InvalidInput> {
    let mut refs: BTreeMap<String, String> = BTreeMap::new();
    let mut slugs: BTreeMap<String, usize> = BTreeMap::new();
    for (i, c) in doc.connections.iter_mut().enumerate() {
        let at = format!("connections[{i}]");
        check_ref(&c.reference, &format!("{at}.ref"), &mut refs)?;
        validate_slug(&c.slug).map_err(|e| moved(e, &format!("{at}.slug")))?;
        if let Some(first) = slugs.insert(c.slug.clone(), i) {
            return Err(InvalidInput::new(
                format!("{at}.slug"),
                format!("duplicate slug (also at connections[{first}].slug)"),
            ));
        }
        check_connection(c, &at)?;
        for (j, p) in c.profiles.iter().enumerate() {
            check_ref(&p.reference, &format!("{at}.profiles[{j}].ref"), &mut refs)?;
        }
    }
    check_chains(doc)
}

/// Fallback chains name other connections of the file by ref, of the same protocol, with
/// valid model names, without cycles and within the length bound.
fn check_chains(doc: &Document) -> Result<(), InvalidInput> {
    use crate::routing::fallback::{validate_chain, ChainNode, Hop};
    let by_ref = |r: &str| doc.connections.iter().find(|c| c.reference == r);
    for (i, c) in doc.connections.iter().enumerate() {
        let mut hops = Vec::with_capacity(c.fallback.len());
        for (k, f) in c.fallback.iter().enumerate() {
            let fat = format!("connections[{i}].fallback[{k}]");
            let Some(target) = by_ref(&f.connection) else {
                return Err(InvalidInput::new(format!("{fat}.connection"), "names no connection of this file"));
            };
            if let Some(m) = &f.model {
                validate_model(m).map_err(|e| moved(e, &format!("{fat}.model")))?;
            }
            hops.push(Hop { slug: target.reference.clone(), model: f.model.clone() });
        }
        if hops.is_empty() {
            continue;
        }
        let lookup = |r: &str| {
            by_ref(r).map(|t| ChainNode {
                protocol: t.protocol,
                hops: t.fallback.iter().map(|f| f.connection.clone()).collect(),
            })
        };
        validate_chain(&c.reference, c.protocol, &hops, &lookup)
            .map_err(|e| InvalidInput::new(format!("connections[{i}].fallback"), e.to_string()))?;
    }
    Ok(())
}

fn check_connection(c: &mut ConnectionEntry, at: &str) -> Result<(), InvalidInput> {
    c.base_url = normalize_base_url(&c.base_url).map_err(|e| moved(e, &format!("{at}.base_url")))?;
    let mut headers = Vec::with_capacity(c.headers.len());
    for (k, h) in c.headers.iter().enumerate() {
        let hat = format!("{at}.headers[{k}]");
        let parsed = Header::new(&h.name, &h.value)
            .map_err(|r| InvalidInput::new(format!("{hat}.{}", r.part.as_str()), r.message))?;
        if let Some(first) = headers.iter().position(|o: &Header| o.name == parsed.name) {
            return Err(InvalidInput::new(
                format!("{hat}.name"),
                format!("'{}' is given twice (also at {at}.headers[{first}].name)", parsed.name),
            ));
        }
        headers.push(parsed);
    }
    headers.sort();
    c.headers = headers.into_iter().map(|h| super::format::HeaderEntry { name: h.name, value: h.value }).collect();
    for (k, m) in c.models.iter().enumerate() {
        let mat = format!("{at}.models[{k}]");
        validate_model(m).map_err(|e| moved(e, &mat))?;
        if let Some(first) = c.models[..k].iter().position(|o| o == m) {
            return Err(InvalidInput::new(mat, format!("is listed twice (also at {at}.models[{first}])")));
        }
    }
    for (from, to) in &c.mapping {
        let mut mat = at.to_string();
        super::scan::push_key(&mut mat, "mapping");
        if echo_safe(from).is_some() {
            super::scan::push_key(&mut mat, from);
        }
        validate_model(from).map_err(|_| InvalidInput::new(&mat, "the source model is not a valid model name"))?;
        validate_model(to).map_err(|e| moved(e, &mat))?;
    }
    check_profiles(&mut c.profiles, at)
}

/// A profile's kind, client and expiry follow the rules of `profile add` (an expiry in the
/// past is kept: the profile arrives without its token anyway); a token's client is filled in.
fn check_kind(p: &mut ProfileEntry, pat: &str) -> Result<(), InvalidInput> {
    let expires_at_ms = match &p.expires_at {
        Some(text) => Some(parse_expiry(text).map_err(|e| moved(e, &format!("{pat}.expires_at")))?),
        None => None,
    };
    let spec = CredentialSpec { kind: p.kind, client: p.client, expires_at_ms };
    let spec = check_credential(spec, None).map_err(|e| {
        let field = if e.field == "expires" { "expires_at".to_string() } else { e.field.clone() };
        moved(e, &format!("{pat}.{field}"))
    })?;
    p.client = spec.client;
    Ok(())
}

fn check_profiles(profiles: &mut [ProfileEntry], at: &str) -> Result<(), InvalidInput> {
    for (j, p) in profiles.iter_mut().enumerate() {
        check_kind(p, &format!("{at}.profiles[{j}]"))?;
    }
    let mut labels: BTreeMap<&str, usize> = BTreeMap::new();
    for (j, p) in profiles.iter().enumerate() {
        let pat = format!("{at}.profiles[{j}]");
        validate_label(&p.label).map_err(|e| moved(e, &format!("{pat}.label")))?;
        if let Some(first) = labels.insert(p.label.as_str(), j) {
            return Err(InvalidInput::new(
                format!("{pat}.label"),
                format!("duplicate label (also at {at}.profiles[{first}].label)"),
            ));
        }
        validate_weight(p.weight).map_err(|e| moved(e, &format!("{pat}.weight")))?;
        validate_priority(p.priority).map_err(|e| moved(e, &format!("{pat}.priority")))?;
    }
    let primaries = profiles.iter().filter(|p| p.primary).count();
    if !profiles.is_empty() && primaries != 1 {
        return Err(InvalidInput::new(
            format!("{at}.profiles"),
            format!("exactly one profile must be primary (found {primaries})"),
        ));
    }
    Ok(())
}

/// A reference is 1–32 characters of `A-Z a-z 0-9 _ -`, unique in the whole document.
fn check_ref(reference: &str, path: &str, seen: &mut BTreeMap<String, String>) -> Result<(), InvalidInput> {
    let ok = !reference.is_empty()
        && reference.len() <= MAX_REF_LEN
        && reference.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !ok {
        return Err(InvalidInput::new(
            path,
            format!("must be 1-{MAX_REF_LEN} characters of A-Z, a-z, 0-9, '_' and '-'"),
        ));
    }
    if let Some(first) = seen.get(reference) {
        return Err(InvalidInput::new(path, format!("duplicate ref (also at {first})")));
    }
    seen.insert(reference.to_string(), path.to_string());
    Ok(())
}

/// The same error at a path in the document instead of a bare field name.
fn moved(e: InvalidInput, path: &str) -> InvalidInput {
    InvalidInput::new(path, e.message)
}
