//! The Gemini dialect over real HTTP: `generateContent`, `streamGenerateContent` (SSE with
//! `alt=sse`, a JSON array without; cut and gzipped by the key's wire), `countTokens`, the
//! paged listing, the `?key=` refusal, and every scripted refusal compared field by field
//! with the providers' recorded sample of that shape.

use std::io::Read;
use std::path::PathBuf;

use crate::common::*;
use serde_json::{json, Value};
use switchyard_mock_provider::{Behaviour, Chunking, GeminiRefusal, KeyScript, MockProvider, Wire, DEFAULT_REPLY};

const MODEL: &str = "gemini-2.5-flash";

fn request_body() -> Value {
    json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
}

async fn gemini_post(mock: &MockProvider, key: &str, path_and_query: &str) -> anyhow::Result<reqwest::Response> {
    Ok(client()
        .post(format!("{}/v1beta/models/{path_and_query}", mock.base_url()))
        .header("x-goog-api-key", key)
        .json(&request_body())
        .send()
        .await?)
}

/// The text of a `GenerateContentResponse`'s first candidate.
fn text_of(chunk: &Value) -> String {
    chunk["candidates"][0]["content"]["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["text"].as_str())
        .collect()
}

#[tokio::test]
async fn generate_content_answers_with_usage_metadata_and_counts_the_model_from_the_path() -> anyhow::Result<()> {
    let mock = mock_with(vec![("g-key", KeyScript::new([MODEL]))]).await?;
    let (status, _, answer) = answer(gemini_post(&mock, "g-key", &format!("{MODEL}:generateContent")).await?).await?;
    assert_eq!(status, 200, "a known key and model: {answer}");
    assert_eq!(text_of(&answer), DEFAULT_REPLY, "the reply text in candidates[0].content.parts");
    assert_eq!(answer["candidates"][0]["finishReason"], "STOP", "a finished answer says STOP");
    let usage = &answer["usageMetadata"];
    let (prompt, out, total) =
        (usage["promptTokenCount"].as_u64(), usage["candidatesTokenCount"].as_u64(), usage["totalTokenCount"].as_u64());
    assert!(prompt.is_some_and(|p| p > 0), "promptTokenCount present: {usage}");
    assert_eq!(out, Some(5), "one candidate token per word of the reply: {usage}");
    assert_eq!(total, Some(prompt.unwrap_or(0) + 5), "total = prompt + candidates: {usage}");
    assert_eq!(mock.hits_for("g-key", MODEL), 1, "the model is read from the path, not the body");
    Ok(())
}

#[tokio::test]
async fn sse_stream_sends_data_chunks_that_join_to_the_reply() -> anyhow::Result<()> {
    let mock = mock_with(vec![("g-key", KeyScript::new([MODEL]))]).await?;
    let resp = gemini_post(&mock, "g-key", &format!("{MODEL}:streamGenerateContent?alt=sse")).await?;
    assert_eq!(resp.status().as_u16(), 200, "the stream starts");
    assert_eq!(header(resp.headers(), "content-type"), Some("text/event-stream"), "alt=sse is an event stream");
    let sse = read_sse(resp).await;
    assert!(sse.broke.is_none(), "the stream ends cleanly: {:?}", sse.broke);
    assert!(sse.events.iter().all(|e| e.name.is_none()), "Gemini's frames are bare data: lines");
    let chunks: Vec<Value> = sse.events.iter().map(Event::json).collect();
    assert_eq!(chunks.iter().map(text_of).collect::<String>(), DEFAULT_REPLY, "the chunks join to the reply");
    let last = chunks.last().cloned().unwrap_or_default();
    assert_eq!(last["candidates"][0]["finishReason"], "STOP", "the last chunk finishes: {last}");
    assert_eq!(last["usageMetadata"]["candidatesTokenCount"], 5, "the last chunk counts the output: {last}");
    assert!(chunks[0]["usageMetadata"]["promptTokenCount"].as_u64().is_some(), "every chunk has prompt usage");
    Ok(())
}

#[tokio::test]
async fn stream_without_alt_is_a_json_array_even_cut_in_bytes_and_gzipped() -> anyhow::Result<()> {
    let mock = mock_with(vec![
        ("g-plain", KeyScript::new([MODEL])),
        ("g-cut-gz", KeyScript::new([MODEL]).wire(Wire::chunked(Chunking::Bytes(3)).gzip())),
    ])
    .await?;
    let resp = gemini_post(&mock, "g-plain", &format!("{MODEL}:streamGenerateContent")).await?;
    assert_eq!(header(resp.headers(), "content-type"), Some("application/json; charset=UTF-8"), "a JSON array");
    let (bytes, broke) = read_body(resp).await;
    assert!(broke.is_none(), "the array ends cleanly");
    let array: Value = serde_json::from_slice(&bytes)?;
    let chunks = array.as_array().cloned().unwrap_or_default();
    assert!(chunks.len() > 1, "several responses in the array: {array}");
    assert_eq!(chunks.iter().map(text_of).collect::<String>(), DEFAULT_REPLY, "the array's chunks join to the reply");

    let resp = client()
        .post(format!("{}/v1beta/models/{MODEL}:streamGenerateContent", mock.base_url()))
        .header("x-goog-api-key", "g-cut-gz")
        .header("accept-encoding", "gzip")
        .json(&request_body())
        .send()
        .await?;
    assert_eq!(header(resp.headers(), "content-encoding"), Some("gzip"), "the wire's gzip applies");
    let (gz, _) = read_body(resp).await;
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut plain)?;
    let ids = |v: &mut Value| v.as_array_mut().into_iter().flatten().for_each(|c| c["responseId"] = Value::Null);
    let (mut cut, mut whole): (Value, Value) = (serde_json::from_slice(&plain)?, array.clone());
    ids(&mut cut);
    ids(&mut whole);
    assert_eq!(cut, whole, "gzipped and cut, the same array (response ids aside)");
    Ok(())
}

#[tokio::test]
async fn a_dying_stream_and_an_in_stream_error() -> anyhow::Result<()> {
    let mock = mock_with(vec![
        ("g-dies", KeyScript::new([MODEL]).behaviour(Behaviour::stream_dies_after(2))),
        ("g-errs", KeyScript::new([MODEL]).behaviour(Behaviour::stream_error(1))),
    ])
    .await?;
    let sse = read_sse(gemini_post(&mock, "g-dies", &format!("{MODEL}:streamGenerateContent?alt=sse")).await?).await;
    assert!(sse.broke.is_some(), "the connection drops");
    assert_eq!(sse.events.len(), 2, "after two chunks");
    assert!(sse.events.iter().all(|e| e.json()["candidates"][0]["finishReason"].is_null()), "none finished");

    let sse = read_sse(gemini_post(&mock, "g-errs", &format!("{MODEL}:streamGenerateContent?alt=sse")).await?).await;
    assert!(sse.broke.is_none(), "an in-stream error ends the stream cleanly");
    let last = sse.events.last().map(Event::json).unwrap_or_default();
    assert_eq!(last["error"]["status"], "UNAVAILABLE", "the last frame is Gemini's error shape: {last}");
    Ok(())
}

#[tokio::test]
async fn count_tokens_answers_total_tokens() -> anyhow::Result<()> {
    let mock = mock_with(vec![("g-key", KeyScript::new([MODEL]))]).await?;
    let (status, _, answer) = answer(gemini_post(&mock, "g-key", &format!("{MODEL}:countTokens")).await?).await?;
    assert_eq!(status, 200, "countTokens answers: {answer}");
    assert!(answer["totalTokens"].as_u64().is_some_and(|n| n > 0), "totalTokens is a positive count: {answer}");
    Ok(())
}

async fn list(mock: &MockProvider, key: &str, query: &str) -> anyhow::Result<(u16, Value)> {
    let resp =
        client().get(format!("{}/v1beta/models{query}", mock.base_url())).header("x-goog-api-key", key).send().await?;
    let (status, _, body) = answer(resp).await?;
    Ok((status, body))
}

#[tokio::test]
async fn listing_pages_with_page_size_and_page_token() -> anyhow::Result<()> {
    let models = ["gemini-a", "gemini-b", "text-embedding-004", "gemini-c", "gemini-d"];
    let mock = mock_with(vec![("g-key", KeyScript::new(models))]).await?;
    let (status, all) = list(&mock, "g-key", "").await?;
    assert_eq!(status, 200, "a known key lists");
    assert!(all.get("nextPageToken").is_none(), "the default page holds all five: {all}");

    let mut names = Vec::new();
    let mut query = "?pageSize=2".to_owned();
    for page_no in 0.. {
        assert!(page_no < 5, "paging ends");
        let (status, page) = list(&mock, "g-key", &query).await?;
        assert_eq!(status, 200, "page {page_no}: {page}");
        let models = page["models"].as_array().cloned().unwrap_or_default();
        assert!(models.len() <= 2, "pageSize bounds a page");
        names.extend(models.iter().filter_map(|m| m["name"].as_str().map(str::to_owned)));
        for m in &models {
            let methods = m["supportedGenerationMethods"].as_array().cloned().unwrap_or_default();
            let generates = methods.contains(&json!("generateContent"));
            let embedding = m["name"].as_str().is_some_and(|n| n.contains("embedding"));
            assert_eq!(generates, !embedding, "only chat models support generateContent: {m}");
        }
        match page["nextPageToken"].as_str() {
            Some(token) => query = format!("?pageSize=2&pageToken={token}"),
            None => break,
        }
    }
    let expected: Vec<String> = models.iter().map(|m| format!("models/{m}")).collect();
    assert_eq!(names, expected, "the pages together list every model once, in order");
    Ok(())
}

#[tokio::test]
async fn a_key_in_the_url_is_refused_and_remembered_never_recorded() -> anyhow::Result<()> {
    let mock = mock_with(vec![("g-url-key", KeyScript::new([MODEL]))]).await?;
    let resp = client()
        .post(format!("{}/v1beta/models/{MODEL}:generateContent?key=g-url-key", mock.base_url()))
        .json(&request_body())
        .send()
        .await?;
    let (status, _, body) = answer(resp).await?;
    assert_eq!(status, 400, "?key= is refused: {body}");
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT", "in Gemini's shape");
    let (status, _) = list(&mock, "g-url-key", "?key=g-url-key&pageSize=1").await?;
    assert_eq!(status, 400, "on the listing too, even with the header");
    assert_eq!(mock.keys_seen_in_urls(), ["g-url-key", "g-url-key"], "both URL keys are remembered");
    let logged = format!("{:?}", mock.requests().iter().map(|r| r.query.clone()).collect::<Vec<_>>());
    assert!(!logged.contains("g-url-key"), "the request log never holds the URL key: {logged}");

    let fresh = mock_with(vec![("g-key", KeyScript::new([MODEL]))]).await?;
    let (status, _, _) = answer(gemini_post(&fresh, "g-key", &format!("{MODEL}:generateContent")).await?).await?;
    assert_eq!(status, 200, "a header key is fine");
    assert!(fresh.keys_seen_in_urls().is_empty(), "and no key was seen in a URL");
    let resp =
        client().post(format!("{}/v1beta/models/{MODEL}:generateContent", fresh.base_url())).json(&request_body());
    let (status, _, body) = answer(resp.send().await?).await?;
    assert_eq!((status, body["error"]["status"].as_str()), (403, Some("PERMISSION_DENIED")), "no key at all");
    Ok(())
}

/// The JSON body of a recorded `.http` sample in the providers' fixtures.
fn fixture(name: &str) -> anyhow::Result<(u16, Value)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../src-tauri/crates/providers/tests/fixtures/gemini")
        .join(format!("{name}.http"));
    let text = std::fs::read_to_string(&path)?;
    let status_line = text.lines().find(|l| l.starts_with("HTTP/")).unwrap_or_default();
    let status = status_line.split_whitespace().nth(1).unwrap_or_default().parse()?;
    let body = text.find("\n{").map(|i| &text[i + 1..]).unwrap_or_default();
    Ok((status, serde_json::from_str(body)?))
}

/// The fields a classifier reads: status, code, each detail's type, reason, quota ids, and
/// whether a retry delay is present.
fn structure(body: &Value) -> Value {
    let details = body["error"]["details"].as_array().cloned().unwrap_or_default();
    let shaped: Vec<Value> = details
        .iter()
        .map(|d| {
            let quota_ids: Vec<Value> =
                d["violations"].as_array().into_iter().flatten().map(|v| v["quotaId"].clone()).collect();
            json!({"type": d["@type"], "reason": d["reason"], "quotaIds": quota_ids,
                   "retryDelay": d["retryDelay"].is_string()})
        })
        .collect();
    json!({"code": body["error"]["code"], "status": body["error"]["status"], "details": shaped})
}

#[tokio::test]
async fn every_scripted_refusal_has_the_structure_of_its_recorded_sample() -> anyhow::Result<()> {
    let cases: Vec<(&str, Behaviour, &str)> = vec![
        ("g-day", Behaviour::Gemini(GeminiRefusal::QuotaPerDay), "quota_per_day"),
        ("g-minute", Behaviour::Gemini(GeminiRefusal::QuotaPerMinute { retry_delay_secs: 39 }), "quota_per_minute"),
        ("g-bare", Behaviour::Gemini(GeminiRefusal::ResourceExhausted), "resource_exhausted"),
        ("g-disabled", Behaviour::Gemini(GeminiRefusal::ServiceDisabled), "service_disabled"),
        ("g-denied", Behaviour::Gemini(GeminiRefusal::PermissionDenied), "permission_denied"),
        ("g-revoked", Behaviour::Unauthorized, "api_key_invalid"),
    ];
    let mut keys: Vec<(&str, KeyScript)> =
        cases.iter().map(|(key, b, _)| (*key, KeyScript::new([MODEL]).behaviour(b.clone()))).collect();
    keys.push(("g-ok", KeyScript::new([MODEL])));
    let mock = mock_with(keys).await?;
    for (key, _, sample) in &cases {
        let (status, _, body) = answer(gemini_post(&mock, key, &format!("{MODEL}:generateContent")).await?).await?;
        let (want_status, want) = fixture(sample)?;
        assert_eq!(status, want_status, "{key}: the HTTP status of {sample}");
        assert_eq!(structure(&body), structure(&want), "{key}: the structure of {sample}: {body}");
    }
    let (status, _, body) = answer(gemini_post(&mock, "g-minute", &format!("{MODEL}:generateContent")).await?).await?;
    assert_eq!(status, 429, "the refusal repeats");
    let delay = body["error"]["details"].as_array().into_iter().flatten().find_map(|d| d["retryDelay"].as_str());
    assert_eq!(delay, Some("39s"), "the scripted retry delay: {body}");

    let unknown = [("g-nobody", format!("{MODEL}:generateContent"), "api_key_invalid")];
    let missing = [("g-ok", "gemini-9-ultra:generateContent".to_owned(), "not_found")];
    for (key, path, sample) in unknown.iter().chain(&missing) {
        let (status, _, body) = answer(gemini_post(&mock, key, path).await?).await?;
        let (want_status, want) = fixture(sample)?;
        assert_eq!(status, want_status, "{key} {path}: the HTTP status of {sample}");
        assert_eq!(structure(&body), structure(&want), "{key} {path}: the structure of {sample}: {body}");
    }
    let (status, page) = list(&mock, "g-day", "").await?;
    assert_eq!(status, 200, "a quota refusal leaves the listing alone: {page}");
    Ok(())
}

#[tokio::test]
async fn gemini_refusals_have_a_nearest_answer_in_the_other_dialects() -> anyhow::Result<()> {
    let mock = mock_with(vec![(
        "g-min",
        KeyScript::new(["gpt-4o"]).behaviour(Behaviour::Gemini(GeminiRefusal::QuotaPerMinute { retry_delay_secs: 7 })),
    )])
    .await?;
    let resp = openai_post(
        &mock,
        "g-min",
        "/v1/chat/completions",
        &json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await?;
    let (status, headers, _) = answer(resp).await?;
    assert_eq!((status, header(&headers, "retry-after")), (429, Some("7")), "OpenAI: a 429 with the same delay");
    Ok(())
}

/// A key with a scripted tool calls it (one `functionCall` part) when the request declares the
/// function and its last turn holds no `functionResponse`; with the response, it answers text.
#[tokio::test]
async fn a_scripted_tool_is_called_until_its_function_response_comes_back() -> anyhow::Result<()> {
    let script = KeyScript::new([MODEL]).reply("done").tool("run_shell_command", json!({"command": "echo hi"}));
    let mock = mock_with(vec![("g-tool", script)]).await?;
    let tools = json!([{"functionDeclarations": [{"name": "run_shell_command", "parameters": {"type": "object"}}]}]);
    let ask = json!({"contents": [{"role": "user", "parts": [{"text": "run it"}]}], "tools": tools});
    let post = |body: Value, method: &'static str| {
        client()
            .post(format!("{}/v1beta/models/{MODEL}:{method}", mock.base_url()))
            .header("x-goog-api-key", "g-tool")
            .json(&body)
            .send()
    };
    let (status, _, called) = answer(post(ask.clone(), "generateContent").await?).await?;
    assert_eq!(status, 200, "{called}");
    assert_eq!(
        called["candidates"][0]["content"]["parts"][0]["functionCall"],
        json!({"name": "run_shell_command", "args": {"command": "echo hi"}}),
        "the tool is called with its scripted input: {called}"
    );
    let streamed = post(ask.clone(), "streamGenerateContent?alt=sse").await?.text().await?;
    assert!(streamed.contains("\"functionCall\""), "the stream's one chunk calls it too: {streamed}");
    let mut answered = ask;
    if let Some(c) = answered["contents"].as_array_mut() {
        c.push(json!({"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {}}}]}));
        c.push(json!({"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "response": {"output": "hi"}}}]}));
    }
    let (_, _, after) = answer(post(answered, "generateContent").await?).await?;
    assert_eq!(text_of(&after), "done", "with the function's response the key answers its text: {after}");
    Ok(())
}
