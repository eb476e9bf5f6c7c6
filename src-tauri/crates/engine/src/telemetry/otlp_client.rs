//! The OTLP exporter's HTTP client: our reqwest 0.12 (rustls) on a current-thread runtime of
//! its own thread, instead of the exporter's reqwest 0.13 blocking client (one HTTP stack in
//! the binary). The batch processor's thread blocks on [`HttpClient::send_bytes`]; the call runs
//! on this client's runtime, never on the relay's.

use bytes::Bytes;
use http::{Request, Response};
use opentelemetry_http::{HttpClient, HttpError};

use crate::error::EngineError;

#[derive(Debug, Clone)]
pub(crate) struct OtlpClient {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

impl OtlpClient {
    /// Starts the client's runtime on a thread that lives as long as the process.
    pub(crate) fn start() -> Result<Self, EngineError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| EngineError::Precondition(format!("the OTLP exporter's runtime could not start: {e}")))?;
        let handle = runtime.handle().clone();
        std::thread::Builder::new()
            .name("switchyard-otlp".into())
            .spawn(move || runtime.block_on(std::future::pending::<()>()))
            .map_err(|e| EngineError::Precondition(format!("the OTLP exporter's thread could not start: {e}")))?;
        let client = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(5))
            .timeout(std::time::Duration::from_secs(10))
            .build()
            .map_err(|e| EngineError::Precondition(format!("the OTLP exporter's client could not start: {e}")))?;
        Ok(OtlpClient { client, runtime: handle })
    }
}

#[async_trait::async_trait]
impl HttpClient for OtlpClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let call = async move {
            let (parts, body) = request.into_parts();
            let url = parts.uri.to_string();
            let answer = client.request(parts.method, url).headers(parts.headers).body(body).send().await?;
            let status = answer.status();
            let headers = answer.headers().clone();
            let body = answer.bytes().await?;
            let mut response = Response::new(body);
            *response.status_mut() = status;
            *response.headers_mut() = headers;
            Ok::<_, reqwest::Error>(response)
        };
        match self.runtime.spawn(call).await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(e)) => Err(Box::new(e)),
            Err(e) => Err(Box::new(e)),
        }
    }
}
