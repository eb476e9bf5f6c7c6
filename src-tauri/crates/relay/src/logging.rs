//! The one logging set-up of the `switchyard` CLI and the desktop app: to stderr only
//! (stdout carries results), filtered by `SWITCHYARD_LOG` (default `warn`). Never logs a
//! secret: secrets are a type without `Display` and with a redacted `Debug`.

/// Installs the subscriber once; later calls do nothing.
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SWITCHYARD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}
