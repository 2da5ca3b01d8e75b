//! A real HTTP/1.1 server on loopback speaking the chat-completions and
//! embeddings protocol, with scripted answers and injected faults. Written
//! against raw sockets so faults (resets, slow bodies, broken JSON) are
//! exactly what the wire carries.
//!
//! [`judge`] answers like a judge whose verdicts follow from the request's
//! content, so a wrong prompt input shows as a wrong score; [`faults`]
//! makes any handler misbehave as real servers do, on a seeded schedule.

pub mod faults;
pub mod judge;

/// The value after `name` on a benchmark's command line, or `default`.
pub fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    pub at: Instant,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The credential the request presented: the bearer token of its
    /// `Authorization` header, else its `api-key` header (Azure's), else
    /// nothing.
    pub fn credential(&self) -> &str {
        self.header("authorization")
            .map(|h| h.strip_prefix("Bearer ").unwrap_or(h))
            .or_else(|| self.header("api-key"))
            .unwrap_or("")
    }

    /// The content of the last message of a chat request.
    pub fn last_message(&self) -> &str {
        self.body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
    }
}

/// What the server does with one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Wait `delay`, then answer.
    Http {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
        delay: Duration,
    },
    /// Close the connection with a TCP reset instead of answering.
    Reset,
    /// Send the head and half the body at once, the rest after `stall`.
    SlowBody { body: String, stall: Duration },
    /// Send the head and half the body, then close the connection with a
    /// TCP reset.
    ResetMidBody { body: String },
    /// Write these bytes as they are (a whole HTTP answer, framed however
    /// the test wants), then close the connection.
    Raw(Vec<u8>),
    /// Go away as a crashed server does: close this connection and every
    /// other one, and stop listening, so that connections are refused
    /// from then on.
    Shutdown,
}

impl Reply {
    /// [`Reply::Raw`] of text or bytes.
    pub fn raw(bytes: impl Into<Vec<u8>>) -> Reply {
        Reply::Raw(bytes.into())
    }

    pub fn json(status: u16, body: Value) -> Reply {
        Reply::Http {
            status,
            headers: Vec::new(),
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        if let Reply::Http { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    pub fn after(mut self, wait: Duration) -> Reply {
        if let Reply::Http { delay, .. } = &mut self {
            *delay = wait;
        }
        self
    }
}

/// A chat completion answering `content`.
pub fn chat_body(content: &str, finish_reason: &str) -> Value {
    json!({
        "id": "cmpl-1", "object": "chat.completion", "model": "judge",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    })
}

pub fn chat(content: &str) -> Reply {
    Reply::json(200, chat_body(content, "stop"))
}

/// llama.cpp's `llama-server` answer to a request longer than its context
/// window (`n_ctx` tokens): a 400 of its own shape, with the token counts
/// and the `exceed_context_size_error` type, which no retry changes.
pub fn context_exceeded(n_prompt_tokens: usize, n_ctx: usize) -> Reply {
    Reply::json(
        400,
        json!({"error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": n_prompt_tokens,
            "n_ctx": n_ctx,
        }}),
    )
}

/// An error body in the OpenAI shape.
pub fn error(status: u16, message: &str) -> Reply {
    Reply::json(
        status,
        json!({"error": {"message": message, "type": "error", "code": null}}),
    )
}

/// An error answer of `status` that quotes the credential `req`
/// presented, as OpenAI's 401 does (`Incorrect API key provided: sk-...`)
/// and as proxies that echo the request's `Authorization` header back do:
/// what a client stores or prints of it must not show the key.
pub fn echo_credential(req: &Recorded, status: u16) -> Reply {
    Reply::json(
        status,
        json!({"error": {
            "message": format!(
                "Incorrect API key provided: {}. You can find your API key at \
                 https://platform.openai.com/account/api-keys.",
                req.credential()
            ),
            "type": "invalid_request_error",
            "code": "invalid_api_key",
            "received": {"authorization": req.header("authorization")},
        }}),
    )
}

type Handler = dyn Fn(&Recorded, usize) -> Reply + Send + Sync;

/// Set once a handler answered [`Reply::Shutdown`].
type Closing = tokio::sync::watch::Receiver<bool>;

pub struct Server {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<Recorded>>>,
    connections: Arc<AtomicUsize>,
    in_flight: Arc<InFlight>,
    task: tokio::task::JoinHandle<()>,
}

/// Requests read and not yet answered, and the most there have been.
#[derive(Default)]
struct InFlight {
    now: AtomicUsize,
    peak: AtomicUsize,
}

/// One request counted in flight until it is dropped, however its
/// answer ends.
struct Answering<'a>(&'a InFlight);

impl<'a> Answering<'a> {
    fn start(gauge: &'a InFlight) -> Answering<'a> {
        let now = gauge.now.fetch_add(1, Ordering::SeqCst) + 1;
        gauge.peak.fetch_max(now, Ordering::SeqCst);
        Answering(gauge)
    }
}

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Server {
    /// Starts a server whose `handler` gets each request and its 0-based
    /// arrival number.
    pub async fn start(
        handler: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static,
    ) -> Server {
        Server::start_at("127.0.0.1:0", handler).await
    }

    /// [`Server::start`] listening at `addr` (a port a test saw refused
    /// earlier, to bring the judge up where a run looked for it).
    pub async fn start_at(
        addr: &str,
        handler: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static,
    ) -> Server {
        let listener = TcpListener::bind(addr).await.expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let counter = Arc::new(AtomicUsize::new(0));
        let connections = Arc::new(AtomicUsize::new(0));
        let in_flight = Arc::new(InFlight::default());
        let (shut, closing) = tokio::sync::watch::channel(false);
        let shut = Arc::new(shut);
        let task = {
            let (log, connections, in_flight) = (
                Arc::clone(&log),
                Arc::clone(&connections),
                Arc::clone(&in_flight),
            );
            let mut stop = closing.clone();
            tokio::spawn(async move {
                loop {
                    let stream = tokio::select! {
                        accepted = listener.accept() => match accepted {
                            Ok((stream, _)) => stream,
                            Err(_) => break,
                        },
                        // Dropping the listener: connections are refused.
                        _ = stop.wait_for(|shut| *shut) => break,
                    };
                    connections.fetch_add(1, Ordering::SeqCst);
                    let conn = Conn {
                        log: Arc::clone(&log),
                        handler: Arc::clone(&handler),
                        counter: Arc::clone(&counter),
                        in_flight: Arc::clone(&in_flight),
                        shut: Arc::clone(&shut),
                        closing: closing.clone(),
                    };
                    tokio::spawn(serve(stream, conn));
                }
            })
        };
        Server {
            addr,
            log,
            connections,
            in_flight,
            task,
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.log.lock().expect("log").clone()
    }

    pub fn count(&self) -> usize {
        self.log.lock().expect("log").len()
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// The most requests that were ever read and not yet answered at once.
    pub fn peak_in_flight(&self) -> usize {
        self.in_flight.peak.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What one connection's task shares with the server.
struct Conn {
    log: Arc<Mutex<Vec<Recorded>>>,
    handler: Arc<Handler>,
    counter: Arc<AtomicUsize>,
    in_flight: Arc<InFlight>,
    shut: Arc<tokio::sync::watch::Sender<bool>>,
    closing: Closing,
}

async fn serve(mut stream: TcpStream, conn: Conn) {
    let Conn {
        log,
        handler,
        counter,
        in_flight,
        shut,
        mut closing,
    } = conn;
    let _ = stream.set_nodelay(true);
    let mut buf: Vec<u8> = Vec::with_capacity(8192);
    loop {
        let read = tokio::select! {
            read = read_request(&mut stream, &mut buf) => read,
            _ = closing.wait_for(|shut| *shut) => None,
        };
        let Some(request) = read else {
            return;
        };
        let _answering = Answering::start(&in_flight);
        let n = counter.fetch_add(1, Ordering::SeqCst);
        log.lock().expect("log").push(request.clone());
        match handler(&request, n) {
            Reply::Http {
                status,
                headers,
                body,
                delay,
            } => {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                let mut head = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
                    body.len()
                );
                for (k, v) in headers {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                head.push_str(&body);
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
            }
            Reply::Reset => {
                let _ = stream.set_zero_linger();
                return;
            }
            Reply::Shutdown => {
                let _ = shut.send(true);
                let _ = stream.set_zero_linger();
                return;
            }
            Reply::Raw(bytes) => {
                let _ = stream.write_all(&bytes).await;
                return;
            }
            Reply::ResetMidBody { body } => {
                let _ = stream.write_all(&head_and_half(&body)).await;
                let _ = stream.flush().await;
                let _ = stream.set_zero_linger();
                return;
            }
            Reply::SlowBody { body, stall } => {
                // Bytes, not chars: half a UTF-8 character is what the wire carries.
                let half = body.len() / 2;
                if stream.write_all(&head_and_half(&body)).await.is_err() {
                    return;
                }
                tokio::time::sleep(stall).await;
                if stream.write_all(&body.as_bytes()[half..]).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// A 200 head framing all of `body` by its length, and the first half of
/// the body's bytes.
fn head_and_half(body: &str) -> Vec<u8> {
    let mut bytes = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    bytes.extend_from_slice(&body.as_bytes()[..body.len() / 2]);
    bytes
}

async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Recorded> {
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split(' ').nth(1)?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or(Value::Null);
    buf.drain(..head_end + len);
    Some(Recorded {
        path,
        headers,
        body,
        at: Instant::now(),
    })
}
