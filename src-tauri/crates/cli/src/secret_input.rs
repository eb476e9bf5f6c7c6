//! Reading a secret from stdin or an environment variable, never from argv.

use std::io::Read;

use switchyard_engine::{EngineError, Secret};

use crate::args::SecretSource;

fn invalid(field: &str, message: &str) -> EngineError {
    EngineError::Invalid(switchyard_engine::InvalidInput::new(field, message))
}

/// `Ok(None)` when no source was named.
pub fn read_optional(source: &SecretSource) -> Result<Option<Secret>, EngineError> {
    if source.secret_stdin {
        let mut buf = String::new();
        std::io::stdin()
            .read_to_string(&mut buf)
            .map_err(|e| invalid("secret-stdin", &format!("cannot read standard input ({e})")))?;
        let secret = Secret::new(buf);
        if secret.is_empty() {
            return Err(invalid("secret-stdin", "standard input was empty"));
        }
        return Ok(Some(secret));
    }
    if let Some(name) = &source.secret_env {
        let value = std::env::var(name)
            .map_err(|_| invalid("secret-env", &format!("environment variable {name} is not set")))?;
        let secret = Secret::new(value);
        if secret.is_empty() {
            return Err(invalid("secret-env", &format!("environment variable {name} is empty")));
        }
        return Ok(Some(secret));
    }
    Ok(None)
}

/// A secret is required: `--secret-stdin` or `--secret-env NAME`.
pub fn read_required(source: &SecretSource) -> Result<Secret, EngineError> {
    read_optional(source)?.ok_or_else(|| invalid("secret", "required: pass --secret-stdin or --secret-env NAME"))
}
