//! E2E client driver on rmcp (the Rust MCP SDK): child-process transport, or its streamable
//! HTTP client transport with `--url`.
//!
//!     rmcp-e2e-client --script SCRIPT.json -- SERVER_COMMAND [ARGS...]
//!     rmcp-e2e-client --script SCRIPT.json --url http://HOST:PORT/mcp
//!
//! The script is a JSON list of steps, `{"op": "list_tools"}` or
//! `{"op": "call", "tool": NAME, "args": {...}, "timeout": SECONDS}`. One JSON line is
//! printed per step, with the same conventions as tests/e2e/py_client.py (see
//! tests/e2e/README.md, "Driver output"). The client uses rmcp's default lifecycle
//! (`ServiceExt::serve`: the `initialize` handshake).

use std::io::Write;
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceError;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::ServiceExt;
use serde_json::{json, Map, Value};

const CONNECT_TIMEOUT: f64 = 15.0;
const CALL_TIMEOUT: f64 = 10.0;
const CLOSE_TIMEOUT: f64 = 3.0;
const MAX_TEXT: usize = 500;
const MAX_JSON: usize = 4000;
const MAX_DEPTH: usize = 64;

fn clip(text: &str) -> String {
    let chars = text.chars().count();
    if chars <= MAX_TEXT {
        return text.to_owned();
    }
    let head: String = text.chars().take(200).collect();
    format!("{head}...<{chars} chars>")
}

fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((item, level)) = stack.pop() {
        match item {
            Value::Array(items) => {
                deepest = deepest.max(level + 1);
                stack.extend(items.iter().map(|child| (child, level + 1)));
            }
            Value::Object(members) => {
                deepest = deepest.max(level + 1);
                stack.extend(members.values().map(|child| (child, level + 1)));
            }
            _ => deepest = deepest.max(level),
        }
    }
    deepest
}

/// A digest that is only used to tell large values apart in the printed records.
fn fnv1a(bytes: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("fnv1a:{hash:016x}")
}

fn summarize(value: &Value) -> Value {
    let levels = depth(value);
    if levels > MAX_DEPTH {
        return json!({ "$deep": levels });
    }
    // serde_json's default Map is ordered by key, so this text has sorted member names.
    let text = value.to_string();
    let chars = text.chars().count();
    if chars > MAX_JSON {
        return json!({ "$large": chars, "digest": fnv1a(text.as_bytes()) });
    }
    value.clone()
}

fn emit(record: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{record}");
    let _ = out.flush();
}

fn variant_name(debug: &str) -> String {
    debug
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("Error")
        .to_owned()
}

fn describe_service_error(error: &ServiceError) -> Map<String, Value> {
    let mut record = Map::new();
    record.insert("outcome".into(), json!("exception"));
    record.insert("class".into(), json!(variant_name(&format!("{error:?}"))));
    if let ServiceError::McpError(data) = error {
        record.insert("code".into(), json!(data.code.0));
    }
    record.insert("message".into(), json!(clip(&error.to_string())));
    record
}

fn describe_result(result: &Value) -> Map<String, Value> {
    let mut record = Map::new();
    record.insert("outcome".into(), json!("result"));
    let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    record.insert("isError".into(), json!(is_error));
    let texts: Vec<Value> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .map(|block| match block.get("text").and_then(Value::as_str) {
                    Some(text) => json!(clip(text)),
                    None => json!(format!(
                        "<{}>",
                        block.get("type").and_then(Value::as_str).unwrap_or("?")
                    )),
                })
                .collect()
        })
        .unwrap_or_default();
    record.insert("texts".into(), Value::Array(texts));
    if let Some(structured) = result.get("structuredContent") {
        record.insert("structuredContent".into(), summarize(structured));
    }
    record
}

fn load_script(arg: &str) -> Result<Vec<Value>, String> {
    let text = if arg.trim_start().starts_with('[') {
        arg.to_owned()
    } else {
        std::fs::read_to_string(arg).map_err(|e| format!("{arg}: {e}"))?
    };
    serde_json::from_str(&text).map_err(|e| format!("script: {e}"))
}

fn seconds(value: f64) -> Duration {
    Duration::from_secs_f64(value)
}

async fn connect(
    command: Vec<String>,
    url: Option<String>,
) -> Result<
    Result<RunningService<RoleClient, ()>, rmcp::service::ClientInitializeError>,
    tokio::time::error::Elapsed,
> {
    if let Some(url) = url {
        let transport = StreamableHttpClientTransport::from_uri(url);
        return tokio::time::timeout(seconds(CONNECT_TIMEOUT), ().serve(transport)).await;
    }
    let mut child = tokio::process::Command::new(&command[0]);
    child.args(&command[1..]);
    let transport = match TokioChildProcess::new(child) {
        Ok(transport) => transport,
        Err(error) => {
            emit(&json!({"step": "connect", "outcome": "exception", "class": "Io",
                         "message": clip(&error.to_string())}));
            std::process::exit(0);
        }
    };
    tokio::time::timeout(seconds(CONNECT_TIMEOUT), ().serve(transport)).await
}

async fn run(steps: Vec<Value>, command: Vec<String>, url: Option<String>) {
    let client = match connect(command, url).await {
        Err(_) => {
            emit(&json!({"step": "connect", "outcome": "timeout"}));
            return;
        }
        Ok(Err(error)) => {
            emit(&json!({"step": "connect", "outcome": "exception",
                         "class": variant_name(&format!("{error:?}")),
                         "message": clip(&error.to_string())}));
            return;
        }
        Ok(Ok(client)) => client,
    };
    let version = client
        .peer_info()
        .map(|info| json!(info.protocol_version.to_string()))
        .unwrap_or(Value::Null);
    emit(&json!({"step": "connect", "outcome": "ok", "protocolVersion": version}));

    for (index, step) in steps.iter().enumerate() {
        let op = step.get("op").and_then(Value::as_str).unwrap_or("");
        let mut record = Map::new();
        record.insert("step".into(), json!(index));
        record.insert("op".into(), json!(op));
        if let Some(tool) = step.get("tool") {
            record.insert("tool".into(), tool.clone());
        }
        let timeout = seconds(step.get("timeout").and_then(Value::as_f64).unwrap_or(CALL_TIMEOUT));
        match op {
            "list_tools" => match tokio::time::timeout(timeout, client.list_tools(None)).await {
                Err(_) => {
                    record.insert("outcome".into(), json!("timeout"));
                }
                Ok(Err(error)) => record.extend(describe_service_error(&error)),
                Ok(Ok(listed)) => {
                    let mut names: Vec<String> =
                        listed.tools.iter().map(|tool| tool.name.to_string()).collect();
                    names.sort();
                    record.insert("outcome".into(), json!("ok"));
                    record.insert("tools".into(), json!(names));
                }
            },
            "call" => {
                let name = step.get("tool").and_then(Value::as_str).unwrap_or("").to_owned();
                let arguments = match step.get("args") {
                    Some(Value::Object(args)) => args.clone(),
                    _ => Map::new(),
                };
                let params = CallToolRequestParams::new(name).with_arguments(arguments);
                match tokio::time::timeout(timeout, client.call_tool(params)).await {
                    Err(_) => {
                        record.insert("outcome".into(), json!("timeout"));
                    }
                    Ok(Err(error)) => record.extend(describe_service_error(&error)),
                    Ok(Ok(result)) => {
                        let value = serde_json::to_value(&result).unwrap_or(Value::Null);
                        record.extend(describe_result(&value));
                    }
                }
            }
            other => {
                record.insert("outcome".into(), json!("exception"));
                record.insert("class".into(), json!("Script"));
                record.insert("message".into(), json!(format!("unknown op {other:?}")));
            }
        }
        emit(&Value::Object(record));
    }
    if tokio::time::timeout(seconds(CLOSE_TIMEOUT), client.cancel()).await.is_err() {
        eprintln!("rmcp-e2e-client: close timed out");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut script = None;
    let mut url = None;
    let mut command = Vec::new();
    let mut index = 0;
    while index < args.len() {
        match args[index].as_str() {
            "--script" => {
                index += 1;
                script = args.get(index).cloned();
            }
            "--url" => {
                index += 1;
                url = args.get(index).cloned();
            }
            "--" => {
                command = args[index + 1..].to_vec();
                break;
            }
            other => {
                eprintln!("rmcp-e2e-client: unknown argument {other}");
                std::process::exit(2);
            }
        }
        index += 1;
    }
    let (Some(script), true) = (script, command.is_empty() == url.is_some()) else {
        eprintln!("usage: rmcp-e2e-client --script SCRIPT (-- COMMAND [ARGS...] | --url URL)");
        std::process::exit(2);
    };
    let steps = match load_script(&script) {
        Ok(steps) => steps,
        Err(error) => {
            eprintln!("rmcp-e2e-client: {error}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(run(steps, command, url));
    // Leave at once, whatever a broken connection left behind.
    std::process::exit(0);
}
