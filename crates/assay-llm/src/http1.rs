//! A small HTTP/1.1 client for plain-`http` endpoints (local vLLM, Ollama,
//! llama.cpp servers): POST one request at a time on each kept-alive
//! connection and read the whole answer, framed by `content-length`,
//! chunked transfer coding, or the end of the connection.
//!
//! It exists for speed: on loopback, reqwest and hyper cost about 45 us of
//! CPU per request on top of the 20 us the socket work itself takes
//! (`cargo bench -p assay-llm --bench throughput` prints all three), and a
//! local server is where many cheap requests are sent. `https` endpoints and
//! any endpoint behind a proxy go through reqwest (see `http.rs`).

use std::sync::Mutex;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longest response head (status line and headers) accepted.
const MAX_HEAD: usize = 64 << 10;

/// Longest chunk-size or trailer line accepted.
const MAX_LINE: usize = 4 << 10;

/// A plain-http origin (`host:port`) with a pool of idle connections.
#[derive(Debug)]
pub(crate) struct Http1 {
    /// Host to connect to (an IPv6 address without its brackets).
    host: String,
    port: u16,
    /// The `Host` header's value.
    authority: String,
    idle: Mutex<Vec<Conn>>,
    max_idle: usize,
    connect_timeout: Duration,
}

/// An answer read whole.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Response {
    /// The first header called `name` (any case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why an exchange failed.
#[derive(Debug, PartialEq)]
pub(crate) enum Failure {
    /// No connection could be made (refused, unknown host, no answer
    /// within the connect timeout).
    Connect(String),
    /// A broken connection, or an answer that is not HTTP/1.x.
    Connection(String),
    /// The body is longer than the caller allows.
    TooLarge,
}

impl Http1 {
    /// A client for `url`'s origin; `None` when it is not plain `http`.
    pub(crate) fn new(
        url: &reqwest::Url,
        max_idle: usize,
        connect_timeout: Duration,
    ) -> Option<Self> {
        if url.scheme() != "http" {
            return None;
        }
        let port = url.port_or_known_default()?;
        // An IPv6 host comes in brackets, as the `Host` header wants it.
        let host = url.host_str()?;
        Some(Http1 {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            port,
            authority: format!("{host}:{port}"),
            idle: Mutex::new(Vec::new()),
            max_idle: max_idle.max(1),
            connect_timeout,
        })
    }

    /// POSTs `body` (JSON) to `path` with `headers` added, and reads the
    /// answer, refusing bodies longer than `max_body`. Dropping the future
    /// drops the connection (a timed-out exchange is never reused).
    pub(crate) async fn post(
        &self,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
        max_body: usize,
    ) -> Result<Response, Failure> {
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
             accept: application/json\r\ncontent-length: {}\r\n",
            self.authority,
            body.len()
        );
        for (name, value) in headers {
            request.push_str(name);
            request.push_str(": ");
            request.push_str(value);
            request.push_str("\r\n");
        }
        request.push_str("\r\n");
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(body);
        let mut conn = match self.take_idle() {
            Some(conn) => conn,
            None => self.connect().await?,
        };
        conn.stream.write_all(&bytes).await.map_err(io_failure)?;
        let (response, reusable) = conn.read_response(max_body).await?;
        if reusable {
            let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
            if idle.len() < self.max_idle {
                idle.push(conn);
            }
        }
        Ok(response)
    }

    /// An idle connection the server has not closed meanwhile.
    fn take_idle(&self) -> Option<Conn> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(conn) = idle.pop() {
            // A server that closed a kept-alive connection has sent its FIN:
            // the socket reads as ended (or holds stray bytes) without
            // waiting. Only a silent, open socket is reused.
            let mut probe = [0u8; 1];
            if let Err(e) = conn.stream.try_read(&mut probe) {
                if e.kind() == std::io::ErrorKind::WouldBlock {
                    return Some(conn);
                }
            }
        }
        None
    }

    async fn connect(&self) -> Result<Conn, Failure> {
        let connect = TcpStream::connect((self.host.as_str(), self.port));
        let stream = match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                return Err(Failure::Connect(format!(
                    "cannot connect to {}: {e}",
                    self.authority
                )))
            }
            Err(_) => {
                return Err(Failure::Connect(format!(
                    "cannot connect to {} within {:?}",
                    self.authority, self.connect_timeout
                )))
            }
        };
        // Requests are written whole: waiting to coalesce them only adds latency.
        stream.set_nodelay(true).map_err(io_failure)?;
        Ok(Conn {
            stream,
            buf: Vec::with_capacity(8 << 10),
            start: 0,
        })
    }
}

fn io_failure(e: std::io::Error) -> Failure {
    Failure::Connection(e.to_string())
}

fn protocol(what: &str) -> Failure {
    Failure::Connection(format!("not a valid HTTP/1.1 answer: {what}"))
}

/// A connection with the bytes read from it and not yet consumed.
#[derive(Debug)]
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    start: usize,
}

/// How the answer's body is delimited.
enum Framing {
    Length(usize),
    Chunked,
    UntilClose,
}

impl Conn {
    /// Reads more bytes into the buffer; `false` at the end of the stream.
    async fn fill(&mut self) -> Result<bool, Failure> {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
        self.buf.reserve(8 << 10);
        let n = self
            .stream
            .read_buf(&mut self.buf)
            .await
            .map_err(io_failure)?;
        Ok(n > 0)
    }

    /// The next CRLF-terminated line (without the CRLF), at most `limit` bytes.
    async fn line(&mut self, limit: usize) -> Result<String, Failure> {
        loop {
            let pending = &self.buf[self.start..];
            if let Some(i) = pending.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&pending[..i]).into_owned();
                self.start += i + 2;
                return Ok(line);
            }
            if pending.len() > limit {
                return Err(protocol("a line is too long"));
            }
            if !self.fill().await? {
                return Err(Failure::Connection(
                    "the server closed the connection before answering in full".into(),
                ));
            }
        }
    }

    /// Moves up to `n` buffered-or-read bytes into `out`; `false` when the
    /// stream ended first.
    async fn take(&mut self, mut n: usize, out: &mut Vec<u8>) -> Result<bool, Failure> {
        while n > 0 {
            if self.start == self.buf.len() && !self.fill().await? {
                return Ok(false);
            }
            let have = (self.buf.len() - self.start).min(n);
            out.extend_from_slice(&self.buf[self.start..self.start + have]);
            self.start += have;
            n -= have;
        }
        Ok(true)
    }

    /// The status line and headers of the next final (non-1xx) answer.
    async fn head(&mut self) -> Result<(u16, bool, Vec<(String, String)>), Failure> {
        loop {
            let status_line = self.line(MAX_HEAD).await?;
            let mut parts = status_line.splitn(3, ' ');
            let version = parts.next().unwrap_or("");
            let http10 = match version {
                "HTTP/1.1" => false,
                "HTTP/1.0" => true,
                _ => return Err(protocol(&format!("status line {status_line:?}"))),
            };
            let status: u16 = parts
                .next()
                .and_then(|s| s.parse().ok())
                .filter(|s| (100..1000).contains(s))
                .ok_or_else(|| protocol(&format!("status line {status_line:?}")))?;
            let mut headers = Vec::new();
            let mut size = status_line.len();
            loop {
                let line = self.line(MAX_HEAD).await?;
                if line.is_empty() {
                    break;
                }
                size += line.len();
                if size > MAX_HEAD {
                    return Err(protocol("the head is too long"));
                }
                let (name, value) = line
                    .split_once(':')
                    .ok_or_else(|| protocol(&format!("header line {line:?}")))?;
                headers.push((name.trim().to_owned(), value.trim().to_owned()));
            }
            // 1xx answers are interim: the real one follows.
            if status >= 200 || status == 101 {
                return Ok((status, http10, headers));
            }
        }
    }

    /// The answer, and whether the connection can carry another request.
    async fn read_response(&mut self, max_body: usize) -> Result<(Response, bool), Failure> {
        let (status, http10, headers) = self.head().await?;
        let value = |name: &'static str| {
            headers
                .iter()
                .filter(move |(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        };
        let has_token = |name: &'static str, token: &str| {
            value(name).any(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
        };
        let framing = if status == 204 || status == 304 {
            Framing::Length(0)
        } else if let Some(coding) = value("transfer-encoding").next_back() {
            match coding.rsplit(',').next().map(str::trim) {
                Some(c) if c.eq_ignore_ascii_case("chunked") => Framing::Chunked,
                _ => Framing::UntilClose,
            }
        } else {
            let mut lengths = value("content-length").flat_map(|v| v.split(','));
            match lengths.next() {
                None => Framing::UntilClose,
                Some(first) => {
                    let n: usize = first
                        .trim()
                        .parse()
                        .map_err(|_| protocol(&format!("content-length {first:?}")))?;
                    if lengths.any(|other| other.trim() != first.trim()) {
                        return Err(protocol("conflicting content-length headers"));
                    }
                    Framing::Length(n)
                }
            }
        };
        let mut body = Vec::new();
        let mut ended = false;
        match framing {
            Framing::Length(n) => {
                if n > max_body {
                    return Err(Failure::TooLarge);
                }
                body.reserve_exact(n);
                if !self.take(n, &mut body).await? {
                    return Err(Failure::Connection(format!(
                        "the server closed the connection after {} of {n} body bytes",
                        body.len()
                    )));
                }
            }
            Framing::Chunked => loop {
                let size_line = self.line(MAX_LINE).await?;
                let digits = size_line.split(';').next().unwrap_or("").trim();
                let size = usize::from_str_radix(digits, 16)
                    .map_err(|_| protocol(&format!("chunk size {size_line:?}")))?;
                if size == 0 {
                    // Trailers, up to the empty line.
                    while !self.line(MAX_LINE).await?.is_empty() {}
                    break;
                }
                if body.len().saturating_add(size) > max_body {
                    return Err(Failure::TooLarge);
                }
                if !self.take(size, &mut body).await? {
                    return Err(protocol("the stream ended inside a chunk"));
                }
                if !self.line(MAX_LINE).await?.is_empty() {
                    return Err(protocol("a chunk is longer than its size"));
                }
            },
            Framing::UntilClose => loop {
                body.extend_from_slice(&self.buf[self.start..]);
                self.start = self.buf.len();
                if body.len() > max_body {
                    return Err(Failure::TooLarge);
                }
                if !self.fill().await? {
                    ended = true;
                    break;
                }
            },
        }
        let keep_alive = if http10 {
            has_token("connection", "keep-alive")
        } else {
            !has_token("connection", "close")
        };
        // Stray bytes after the answer mean the framing is not what it says.
        let reusable = keep_alive && !ended && self.start == self.buf.len() && status != 101;
        Ok((
            Response {
                status,
                headers,
                body,
            },
            reusable,
        ))
    }
}
