//! The model in a Gemini path: `/v1beta/models/{model}:{method}` (also `/v1/…`, and
//! `tunedModels/…`). Routing, mapping and the ledger read the model here; mapping rewrites the
//! path and leaves the body untouched (a Gemini body names no model).

/// The parts of a Gemini model call path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelCall<'p> {
    /// Everything before the model id, e.g. `/v1beta/models/`.
    pub prefix: &'p str,
    pub model: &'p str,
    /// The method after the colon: `generateContent`, `streamGenerateContent`, `countTokens`, …
    pub method: &'p str,
}

impl<'p> ModelCall<'p> {
    /// Reads `path` (no query). `None` when it is not a `…/models/{model}:{method}` call.
    pub fn parse(path: &'p str) -> Option<Self> {
        let start = path.rfind("/models/").map(|i| i + "/models/".len())?;
        let (model, method) = path[start..].split_once(':')?;
        let valid = |s: &str| !s.is_empty() && !s.contains('/') && !s.contains(':');
        (valid(model) && valid(method)).then_some(ModelCall { prefix: &path[..start], model, method })
    }

    /// The same call for `model` (a mapped name).
    pub fn with_model(&self, model: &str) -> String {
        format!("{}{}:{}", self.prefix, model, self.method)
    }

    /// A streamed call (`streamGenerateContent`).
    pub fn is_stream(&self) -> bool {
        self.method == "streamGenerateContent"
    }
}

/// Whether a query string asks for server-sent events (`alt=sse`); without it a Gemini stream
/// is a JSON array.
pub fn wants_sse(query: &str) -> bool {
    query.split('&').any(|pair| pair == "alt=sse")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_rewrites_the_model_in_the_path() {
        let c = ModelCall::parse("/v1beta/models/gemini-2.5-flash:streamGenerateContent");
        assert_eq!(
            c,
            Some(ModelCall { prefix: "/v1beta/models/", model: "gemini-2.5-flash", method: "streamGenerateContent" }),
            "prefix, model and method"
        );
        assert_eq!(
            c.map(|c| c.with_model("gemini-2.5-pro")).as_deref(),
            Some("/v1beta/models/gemini-2.5-pro:streamGenerateContent"),
            "mapping rewrites only the model"
        );
        assert!(c.is_some_and(|c| c.is_stream()), "a stream call");
        let relayed = ModelCall::parse("/c/gem/v1beta/models/gemini-2.0-flash:countTokens");
        assert_eq!(relayed.map(|c| (c.model, c.method)), Some(("gemini-2.0-flash", "countTokens")), "under /c/SLUG");
        assert_eq!(ModelCall::parse("/v1beta/models"), None, "the listing is no model call");
        assert_eq!(ModelCall::parse("/v1beta/models/:generateContent"), None, "an empty model");
        assert_eq!(ModelCall::parse("/v1beta/models/a/b:generateContent"), None, "a slash in the model");
        assert!(wants_sse("alt=sse") && wants_sse("x=1&alt=sse"), "alt=sse anywhere");
        assert!(!wants_sse("") && !wants_sse("alt=json"), "else a JSON array");
    }
}
