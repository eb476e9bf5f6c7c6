//! `mock-provider [--listen ADDR] [--script FILE.json] [--no-record] [--dump-requests FILE]`: serves the scripted fake provider
//! until SIGINT/SIGTERM. Its first stdout line is `mock provider listening on http://ADDR`.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use switchyard_mock_provider::{MockProvider, ScriptFile};

/// A fake OpenAI/Anthropic provider that follows a per-key script.
#[derive(Debug, Parser)]
#[command(name = "mock-provider")]
struct Args {
    /// Address to bind (loopback, port 0 = any free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// JSON script: `{"keys": {"KEY": {"models": [...], "behaviour": ..., ...}}}`.
    #[arg(long)]
    script: Option<PathBuf>,
    /// Count hits but keep no request log (for benchmarks: memory stays flat).
    #[arg(long)]
    no_record: bool,
    /// Append every request to this file as JSON lines (credential headers redacted).
    #[arg(long)]
    dump_requests: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let script = match &args.script {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading script {}", path.display()))?;
            ScriptFile::from_json(&text).with_context(|| format!("parsing script {}", path.display()))?
        }
        None => ScriptFile::default(),
    };
    let provider = MockProvider::bind(args.listen).await.with_context(|| format!("binding {}", args.listen))?;
    provider.load_script(script);
    provider.set_recording(!args.no_record);
    if let Some(path) = &args.dump_requests {
        provider.dump_requests(path).with_context(|| format!("opening {}", path.display()))?;
    }
    announce(&provider)?;
    wait_for_signal().await?;
    provider.shutdown().await?;
    Ok(())
}

#[allow(clippy::print_stdout)] // the URL line is this binary's output contract
fn announce(provider: &MockProvider) -> std::io::Result<()> {
    println!("mock provider listening on {}", provider.base_url());
    std::io::stdout().flush()
}

async fn wait_for_signal() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            result = tokio::signal::ctrl_c() => result,
            _ = term.recv() => Ok(()),
        }
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c().await
    }
}
