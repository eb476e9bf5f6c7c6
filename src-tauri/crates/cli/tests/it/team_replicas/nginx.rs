//! nginx (Debian's `nginx-light`) as a child process in front of the replicas: a generated
//! config in a temp dir (pid, logs and temp paths there), `upstream` round robin over the
//! replicas, HTTP/1.1 without upstream keepalive (every request is balanced anew),
//! `proxy_buffering off`, `Host: 127.0.0.1` (a replica on plain loopback
//! refuses any other Host), the next upstream on a connection error (a dead replica is passed
//! over), and `x-upstream: $upstream_addr` on every answer so a test sees which replica served.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Nginx {
    /// `127.0.0.1:PORT` nginx listens on.
    pub addr: String,
    child: Child,
    dir: PathBuf,
}

/// A free loopback port (bound, read, released).
fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The config: one worker, everything under `dir`, round robin over `upstreams`.
pub fn config(dir: &Path, port: u16, upstreams: &[String]) -> String {
    let d = dir.display();
    let servers: String = upstreams.iter().map(|u| format!("        server {u};\n")).collect();
    // Started as root, nginx's workers would run as `nobody`, who cannot enter the temp dir.
    let user = if is_root() { "user root;\n" } else { "" };
    format!(
        "{user}worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log info;
events {{ worker_connections 1024; }}
http {{
    log_format upstream '$remote_addr \"$request\" $status upstream=$upstream_addr $upstream_status';
    access_log {d}/access.log upstream;
    client_body_temp_path {d}/client_body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    upstream replicas {{
{servers}    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://replicas;
            proxy_http_version 1.1;
            # A plain (loopback) replica answers only to a loopback Host (DNS rebinding guard).
            proxy_set_header Host 127.0.0.1;
            # Says the request was forwarded: a replica then takes no install token from it.
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_next_upstream error timeout;
            proxy_connect_timeout 2s;
            proxy_read_timeout 60s;
            add_header x-upstream $upstream_addr always;
        }}
    }}
}}
"
    )
}

impl Nginx {
    /// Writes the config into `dir` and runs `nginx -p DIR -c DIR/nginx.conf -e DIR/error.log
    /// -g 'daemon off;'` until it accepts connections.
    pub fn start(dir: &Path, upstreams: &[String]) -> Result<Self, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let port = free_port()?;
        let conf = dir.join("nginx.conf");
        std::fs::write(&conf, config(dir, port, upstreams)).map_err(|e| e.to_string())?;
        let nginx = ["/usr/sbin/nginx", "nginx"].into_iter().find(|p| Path::new(p).exists()).unwrap_or("nginx");
        // SIGTERM when the test dies: a SIGKILL'd master would leave its worker running.
        let mut child = super::tether::command(nginx, "TERM")
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(&conf)
            .arg("-e")
            .arg(dir.join("error.log"))
            .args(["-g", "daemon off;"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                format!("nginx not started ({e}): apt-get install nginx-light (scripts/setup-system --tests)")
            })?;
        let addr = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(&addr).is_err() {
            let exited = child.try_wait().ok().flatten();
            if exited.is_some() || Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                let log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
                return Err(format!("nginx did not listen on {addr} (exit {exited:?}); error.log:\n{log}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Nginx { addr, child, dir: dir.to_path_buf() })
    }

    /// The last lines of its access and error logs, for assertion messages.
    pub fn log_tail(&self) -> String {
        let mut out = String::new();
        for name in ["access.log", "error.log"] {
            let text = std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            out.push_str(&format!("--- nginx {name}\n{}\n", lines[lines.len().saturating_sub(15)..].join("\n")));
        }
        out
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGKILL of the master leaves its worker; SIGTERM (fast shutdown) ends both, then the
        // master is reaped. A master that does not go within a second is killed.
        let _ = Command::new("kill").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
