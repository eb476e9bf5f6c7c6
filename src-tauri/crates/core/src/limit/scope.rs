//! What a user may reach ([`UserScope`]): connections and pools by name, models by pattern
//! (`*` matches any run of characters); an empty list allows all.

/// A user's scope as stored: comma-separated lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserScope {
    pub targets: Vec<String>,
    pub models: Vec<String>,
}

impl UserScope {
    /// From the stored comma-separated lists.
    pub fn from_lists(targets: &str, models: &str) -> Self {
        let split = |s: &str| s.split(',').map(str::trim).filter(|x| !x.is_empty()).map(str::to_string).collect();
        UserScope { targets: split(targets), models: split(models) }
    }

    pub fn is_everything(&self) -> bool {
        self.targets.is_empty() && self.models.is_empty()
    }

    /// Whether the user may send to connection or pool `name`.
    pub fn allows_target(&self, name: &str) -> bool {
        self.targets.is_empty() || self.targets.iter().any(|t| t == name)
    }

    /// Whether the user may ask for `model` (`None`: the request names none, which a scope
    /// with model patterns refuses — what it would reach is not known).
    pub fn allows_model(&self, model: Option<&str>) -> bool {
        if self.models.is_empty() {
            return true;
        }
        model.is_some_and(|m| self.models.iter().any(|p| pattern_matches(p, m)))
    }
}

/// Whether `pattern` (`*` for any run of characters, nothing else special) matches all of `text`.
pub fn pattern_matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else { return false };
    let tail: Vec<&str> = parts.collect();
    let Some((last, middle)) = tail.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_whole_names_with_stars_anywhere() {
        for (p, t) in [
            ("claude-*", "claude-sonnet-4"),
            ("*", "x"),
            ("gpt-5", "gpt-5"),
            ("*-mini", "gpt-5-mini"),
            ("a*b*c", "aXbYc"),
            ("a*a", "aa"),
        ] {
            assert!(pattern_matches(p, t), "{p} matches {t}");
        }
        for (p, t) in
            [("claude-*", "gpt-5"), ("gpt-5", "gpt-5-mini"), ("*-mini", "gpt-5-max"), ("a*a", "a"), ("a*b*c", "acb")]
        {
            assert!(!pattern_matches(p, t), "{p} does not match {t}");
        }
    }

    #[test]
    fn an_empty_scope_allows_all_and_a_model_list_needs_a_model() {
        let all = UserScope::from_lists("", "");
        assert!(all.allows_target("x") && all.allows_model(None), "no lists: everything");
        let narrow = UserScope::from_lists("work, team", "claude-*");
        assert!(narrow.allows_target("team") && !narrow.allows_target("other"));
        assert!(narrow.allows_model(Some("claude-opus-4")) && !narrow.allows_model(Some("gpt-5")));
        assert!(!narrow.allows_model(None), "a request naming no model is not known to be in scope");
    }
}
