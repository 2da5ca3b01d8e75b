//! The response cache: one SQLite file in WAL mode, plus one append-only
//! log per process that has answers on their way into it.
//!
//! Only validated answers are stored, keyed by [`RequestKey`]; a row that no
//! longer decodes is deleted and reported as a miss, so it is fetched again.
//! Rows hold the answer, its usage and latency, and the model name, never a
//! header or key.
//!
//! Chat answers are appended in id order to a table without a key index:
//! a B-tree over random hash keys makes every insert rewrite a page of its
//! own, several times what the row costs. Each process instead keeps an
//! index in memory from the key's first 8 bytes to the row id, and catches
//! up on rows appended since (by any process) when a lookup misses there.
//! Ids only grow (`AUTOINCREMENT`), so that catch-up misses nothing; a read
//! compares the whole stored key, so a stale or colliding entry is a miss,
//! never someone else's answer. That catch-up starts a read transaction,
//! which costs more than the rest of a lookup, so it runs at most once per
//! [`CATCH_UP_EVERY`]: a row another process appended since may be
//! fetched again, never served wrong.
//!
//! Storing an answer writes it to this process's log file (one `write`,
//! so a killed process keeps it, as it would keep a WAL commit) and hands
//! it to a folder thread, which commits what arrived every
//! [`FOLD_EVERY`] in one transaction. Nobody waits for that commit: an
//! SQLite commit and the wake-ups of its waiters cost more CPU than the
//! HTTP exchange that fetched the answer. Until it is folded, this process
//! serves the answer from memory; other processes see it once folded. A
//! log left by a process that died is folded by the next one to open the
//! cache: each log is locked (`flock`) by its owner while it lives. (So is
//! the empty draft a log is created as before its rename; one left by a
//! process killed in between is removed once a minute old.)

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, TryLockError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use crate::key::RequestKey;
use crate::model::{ChatResponse, Source};
use crate::spec::CacheLocation;
use crate::{Error, FailureKind};

/// Version of the table layout, stored in the file's `meta` table.
/// Version 1 files (chat keyed by hex text) are converted on open.
pub const CACHE_FORMAT_VERSION: u32 = 2;

const CHAT_TABLE: &str = "CREATE TABLE chat (
    id INTEGER PRIMARY KEY AUTOINCREMENT, key BLOB NOT NULL, model TEXT NOT NULL,
    response TEXT NOT NULL, prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL, latency_us INTEGER NOT NULL,
    created_at INTEGER NOT NULL)";

const EMBEDDING_TABLE: &str = "CREATE TABLE embedding (
    key TEXT PRIMARY KEY, model TEXT NOT NULL, vector BLOB NOT NULL,
    created_at INTEGER NOT NULL)";

/// Read connections per cache: WAL lets them read in parallel with each
/// other and with the writer, so lookups do not queue behind one lock.
const READERS: usize = 4;

/// How long the folder thread gathers stored answers before it commits
/// them in one transaction. Each group costs some 200 us on top of its
/// rows (measured: 64 rows in 300-500 us, 320 rows in about 1 ms), as much
/// CPU as several HTTP exchanges; other processes see an answer this much
/// later.
pub const FOLD_EVERY: Duration = Duration::from_millis(500);

/// Once a log holds this many bytes, the folder empties it (briefly
/// holding up new answers) instead of letting it grow with a long run.
const LOG_LIMIT: u64 = 4 << 20;

/// How often, at most, a lookup that misses the in-memory index reads the
/// rows other processes appended (see [`Cache::with_catch_up_interval`]).
pub const CATCH_UP_EVERY: Duration = Duration::from_millis(100);

/// What the folder thread is handed.
enum Fold {
    /// An answer already in the log.
    Row(Arc<ChatRow>),
    /// Fold everything now, empty the log, and report the outcome.
    Now(mpsc::Sender<Result<(), Error>>),
}

/// An open cache file, shareable across tasks.
#[derive(Debug)]
pub struct Cache {
    path: PathBuf,
    writer: Arc<Mutex<Connection>>,
    log: Arc<Mutex<Log>>,
    folds: Option<mpsc::Sender<Fold>>,
    folder: Option<JoinHandle<()>>,
    readers: Vec<Mutex<Connection>>,
    next_reader: AtomicUsize,
    index: Arc<Mutex<ChatIndex>>,
    catch_up_every: Duration,
}

/// Where this process knows chat answers to be: row id by the key's first
/// 8 bytes, for rows up to `seen` plus the ones it appended itself, and
/// its answers not yet folded into the table.
#[derive(Debug, Default)]
struct ChatIndex {
    ids: HashMap<u64, i64>,
    pending: HashMap<u64, Arc<ChatRow>>,
    seen: i64,
    caught_up_at: Option<Instant>,
}

/// Where a lookup finds an answer.
enum Found {
    Table(i64),
    Pending(Arc<ChatRow>),
}

impl ChatIndex {
    /// Reads the chat rows appended since it last looked, through `conn`.
    fn catch_up(&mut self, conn: &Connection) -> Result<(), Error> {
        let mut stmt = conn.prepare_cached("SELECT id, key FROM chat WHERE id > ?1 ORDER BY id")?;
        let mut rows = stmt.query([self.seen])?;
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            // A row whose key is not 32 bytes cannot answer any request.
            let key = row.get_ref(1)?;
            if let Ok(digest) = <[u8; 32]>::try_from(key.as_blob().unwrap_or_default()) {
                self.ids.insert(prefix(&digest), id);
            }
            self.seen = id;
        }
        Ok(())
    }
}

fn prefix(digest: &[u8; 32]) -> u64 {
    let mut head = [0u8; 8];
    head.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(head)
}

/// What [`Cache::stats`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheStats {
    /// The cache file.
    pub path: PathBuf,
    /// Stored chat answers.
    pub chat_entries: u64,
    /// Stored embedding vectors.
    pub embedding_entries: u64,
    /// Prompt tokens the stored answers cost when first fetched.
    pub prompt_tokens: u64,
    /// Completion tokens the stored answers cost when first fetched.
    pub completion_tokens: u64,
    /// Size of the database file plus its write-ahead log, in bytes.
    pub file_bytes: u64,
}

/// How long a statement waits for another process's lock on the file.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Makes the file's journal a write-ahead log. Switching takes the file's
/// exclusive lock, and SQLite refuses it at once ("database is locked"),
/// without waiting out the busy timeout, while another process opening the
/// same new file holds it: two Ray tasks starting together failed so. So
/// it is asked again, with short pauses, for as long as that timeout.
fn use_wal(conn: &Connection) -> Result<(), Error> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(1);
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy && Instant::now() < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            done => return Ok(done?),
        }
    }
}

impl Cache {
    /// Opens (creating if needed) the cache file at `path`, with its parent
    /// folders, and folds in the logs of processes that died before they
    /// could.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                Error::new(
                    FailureKind::Cache,
                    format!("cannot create {}: {e}", parent.display()),
                )
            })?;
        }
        let conn = Connection::open(&path)?;
        // First: another process may be writing the file right now.
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // WAL lets readers go on while one writer appends; NORMAL sync is
        // durable across process crashes, which is what a killed run needs.
        use_wal(&conn)?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // One transaction, so two processes opening an old file at once
        // convert it once.
        conn.execute_batch("BEGIN IMMEDIATE")?;
        match prepare_tables(&conn, &path) {
            Ok(()) => conn.execute_batch("COMMIT")?,
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        }
        let mut readers = Vec::with_capacity(READERS);
        for _ in 0..READERS {
            let reader = Connection::open(&path)?;
            reader.busy_timeout(BUSY_TIMEOUT)?;
            readers.push(Mutex::new(reader));
        }
        let writer = Arc::new(Mutex::new(conn));
        let index = Arc::new(Mutex::new(ChatIndex::default()));
        fold_orphan_logs(&path, &writer, &index)?;
        let log = Arc::new(Mutex::new(Log::create(&path)?));
        let (folds, queue) = mpsc::channel();
        let folder = Folder {
            writer: Arc::clone(&writer),
            index: Arc::clone(&index),
            log: Arc::clone(&log),
            unfolded: Vec::new(),
        };
        // The thread ends when the cache (the only sender) is dropped.
        let folder = std::thread::Builder::new()
            .name("assay-cache-fold".into())
            .spawn(move || folder.run(&queue))
            .map_err(|e| {
                Error::new(
                    FailureKind::Cache,
                    format!("cannot start cache folder: {e}"),
                )
            })?;
        Ok(Cache {
            path,
            writer,
            log,
            folds: Some(folds),
            folder: Some(folder),
            readers,
            next_reader: AtomicUsize::new(0),
            index,
            catch_up_every: CATCH_UP_EVERY,
        })
    }

    /// Sets how often, at most, a lookup that misses the in-memory index
    /// reads the rows other processes appended since the last time
    /// (default [`CATCH_UP_EVERY`]; zero reads them on every such miss).
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join(format!("assay-doc-catch-up-{}", std::process::id()));
    /// let cache = assay_llm::Cache::open(dir.join("cache.sqlite"))?
    ///     .with_catch_up_interval(std::time::Duration::ZERO);
    /// # drop(cache);
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok::<(), assay_llm::Error>(())
    /// ```
    pub fn with_catch_up_interval(mut self, every: Duration) -> Self {
        self.catch_up_every = every;
        self
    }

    /// Opens the cache `location` names; `None` when it is disabled.
    pub fn open_location(location: &CacheLocation) -> Result<Option<Self>, Error> {
        location.resolve()?.map(Cache::open).transpose()
    }

    /// The file this cache lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn writer(&self) -> Result<MutexGuard<'_, Connection>, Error> {
        self.writer.lock().map_err(|_| poisoned())
    }

    /// A free read connection, else the next one in turn.
    fn reader(&self) -> Result<MutexGuard<'_, Connection>, Error> {
        for r in &self.readers {
            match r.try_lock() {
                Ok(guard) => return Ok(guard),
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Poisoned(_)) => return Err(poisoned()),
            }
        }
        let i = self.next_reader.fetch_add(1, Ordering::Relaxed) % self.readers.len();
        self.readers[i].lock().map_err(|_| poisoned())
    }

    fn index(&self) -> Result<MutexGuard<'_, ChatIndex>, Error> {
        self.index.lock().map_err(|_| poisoned())
    }

    /// Where this process knows the answer for `digest` to be, catching up
    /// on the table on a miss unless it did so within the catch-up interval.
    fn find_chat(&self, digest: &[u8; 32]) -> Result<Option<Found>, Error> {
        let mut index = self.index()?;
        let at = prefix(digest);
        if let Some(row) = index.pending.get(&at).filter(|row| row.key == *digest) {
            return Ok(Some(Found::Pending(Arc::clone(row))));
        }
        if let Some(id) = index.ids.get(&at) {
            return Ok(Some(Found::Table(*id)));
        }
        if index
            .caught_up_at
            .is_some_and(|at| at.elapsed() < self.catch_up_every)
        {
            return Ok(None);
        }
        index.catch_up(&*self.reader()?)?;
        index.caught_up_at = Some(Instant::now());
        Ok(index.ids.get(&at).copied().map(Found::Table))
    }

    /// The stored answer for `key`, marked [`Source::Cache`].
    pub fn get_chat(&self, key: &RequestKey) -> Result<Option<ChatResponse>, Error> {
        let digest = key.digest();
        let id = match self.find_chat(&digest)? {
            None => return Ok(None),
            Some(Found::Pending(row)) => return Ok(decode_chat(&row.response)),
            Some(Found::Table(id)) => id,
        };
        let row: Option<(Vec<u8>, String)> = self
            .reader()?
            .prepare_cached("SELECT key, response FROM chat WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let text = match row {
            Some((stored, text)) if stored == digest => text,
            // Another key sharing the first 8 bytes: a miss, never its answer.
            Some(_) => return Ok(None),
            // Deleted since (e.g. `assay cache clear` in another process).
            None => {
                let mut index = self.index()?;
                if index.ids.get(&prefix(&digest)) == Some(&id) {
                    index.ids.remove(&prefix(&digest));
                }
                return Ok(None);
            }
        };
        let answer = decode_chat(&text);
        if answer.is_none() {
            self.writer()?
                .prepare_cached("DELETE FROM chat WHERE id = ?1")?
                .execute([id])?;
        }
        Ok(answer)
    }

    /// Stores a validated answer under `key` (replacing any older row),
    /// in a transaction of its own.
    pub fn put_chat(
        &self,
        key: &RequestKey,
        model: &str,
        response: &ChatResponse,
    ) -> Result<(), Error> {
        let row = ChatRow::new(key, model, response)?;
        commit_rows(&self.writer, &self.index, std::iter::once(&row))
    }

    /// Stores a validated answer like [`Cache::put_chat`], but through this
    /// process's log: once this returns, the answer survives the process
    /// being killed, and this process serves it; the folder thread commits
    /// it to the table within [`FOLD_EVERY`], together with the answers
    /// stored meanwhile, and other processes see it from then on.
    pub fn store_chat(
        &self,
        key: &RequestKey,
        model: &str,
        response: &ChatResponse,
    ) -> Result<(), Error> {
        let row = Arc::new(ChatRow::new(key, model, response)?);
        let record = row.record();
        let at = prefix(&row.key);
        self.index()?.pending.insert(at, Arc::clone(&row));
        let logged = self.log.lock().map_err(|_| poisoned()).and_then(|mut log| {
            log.append(&record)?;
            // Sent under the log's lock: when the folder holds that lock,
            // every row in the log has reached its queue.
            self.send(Fold::Row(Arc::clone(&row)))
        });
        if logged.is_err() {
            let mut index = self.index()?;
            if index.pending.get(&at).is_some_and(|p| Arc::ptr_eq(p, &row)) {
                index.pending.remove(&at);
            }
        }
        logged
    }

    /// Commits every answer stored so far to the table and empties this
    /// process's log: other processes see them all from now on.
    pub fn flush(&self) -> Result<(), Error> {
        let (done, outcome) = mpsc::channel();
        self.send(Fold::Now(done))?;
        if let Some(folder) = &self.folder {
            folder.thread().unpark();
        }
        outcome.recv().map_err(|_| stopped())?
    }

    fn send(&self, fold: Fold) -> Result<(), Error> {
        self.folds
            .as_ref()
            .ok_or_else(stopped)?
            .send(fold)
            .map_err(|_| stopped())
    }

    /// The stored unit vector for `key`.
    pub fn get_embedding(&self, key: &RequestKey) -> Result<Option<Vec<f32>>, Error> {
        let blob: Option<Vec<u8>> = self
            .reader()?
            .prepare_cached("SELECT vector FROM embedding WHERE key = ?1")?
            .query_row([key.as_str()], |r| r.get(0))
            .optional()?;
        let Some(blob) = blob else { return Ok(None) };
        if blob.is_empty() || blob.len() % 4 != 0 {
            self.writer()?
                .prepare_cached("DELETE FROM embedding WHERE key = ?1")?
                .execute([key.as_str()])?;
            return Ok(None);
        }
        Ok(Some(
            blob.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ))
    }

    /// Stores a unit vector under `key`.
    pub fn put_embedding(
        &self,
        key: &RequestKey,
        model: &str,
        vector: &[f32],
    ) -> Result<(), Error> {
        let blob: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.writer()?
            .prepare_cached(
                "INSERT OR REPLACE INTO embedding (key, model, vector, created_at) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![key.as_str(), model, blob, now_secs()])?;
        Ok(())
    }

    /// Counts of what is stored (`assay cache stats`), this process's
    /// answers not yet folded included.
    pub fn stats(&self) -> Result<CacheStats, Error> {
        self.flush()?;
        let conn = self.writer()?;
        let (chat_entries, prompt_tokens, completion_tokens): (i64, i64, i64) = conn.query_row(
            "SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0) FROM chat",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        let embedding_entries: i64 =
            conn.query_row("SELECT COUNT(*) FROM embedding", [], |r| r.get(0))?;
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        Ok(CacheStats {
            path: self.path.clone(),
            chat_entries: u64::try_from(chat_entries).unwrap_or(0),
            embedding_entries: u64::try_from(embedding_entries).unwrap_or(0),
            prompt_tokens: u64::try_from(prompt_tokens).unwrap_or(0),
            completion_tokens: u64::try_from(completion_tokens).unwrap_or(0),
            file_bytes: size(&self.path) + size(Path::new(&wal)),
        })
    }

    /// Removes every stored answer and vector and shrinks the file
    /// (`assay cache clear`). Returns how many rows were removed.
    pub fn clear(&self) -> Result<u64, Error> {
        // Folded first, so they are removed too, and emptied from the log,
        // so no later open brings them back.
        self.flush()?;
        let conn = self.writer()?;
        let removed =
            conn.execute("DELETE FROM chat", [])? + conn.execute("DELETE FROM embedding", [])?;
        conn.execute_batch("VACUUM; PRAGMA wal_checkpoint(TRUNCATE);")?;
        self.index()?.ids.clear();
        Ok(removed as u64)
    }
}

impl Drop for Cache {
    fn drop(&mut self) {
        // Closing the queue makes the folder commit what is left, remove
        // the log and end; waiting for it leaves no log behind.
        drop(self.folds.take());
        if let Some(folder) = self.folder.take() {
            folder.thread().unpark();
            let _ = folder.join();
        }
    }
}

/// A chat answer encoded for its table row.
#[derive(Debug)]
struct ChatRow {
    key: [u8; 32],
    model: String,
    response: String,
    prompt_tokens: i64,
    completion_tokens: i64,
    latency_us: i64,
    created_at: i64,
}

impl ChatRow {
    fn new(key: &RequestKey, model: &str, response: &ChatResponse) -> Result<Self, Error> {
        let json = serde_json::to_string(response)
            .map_err(|e| Error::new(FailureKind::Cache, format!("cannot encode answer: {e}")))?;
        Ok(ChatRow {
            key: key.digest(),
            model: model.to_owned(),
            response: json,
            prompt_tokens: clamp_i64(response.usage.prompt_tokens),
            completion_tokens: clamp_i64(response.usage.completion_tokens),
            latency_us: clamp_i64(u64::try_from(response.latency.as_micros()).unwrap_or(u64::MAX)),
            created_at: now_secs(),
        })
    }

    /// The row as one log record: the body's length (u32), the body (key,
    /// the four numbers as i64, the model's length as u32, the model, the
    /// answer), and the first 8 bytes of the body's SHA-256, all
    /// little-endian. The check lets a reader stop at a record a crashed
    /// machine left half written.
    fn record(&self) -> Vec<u8> {
        let body_len = 32 + 4 * 8 + 4 + self.model.len() + self.response.len();
        let mut out = Vec::with_capacity(4 + body_len + 8);
        out.extend_from_slice(&u32::try_from(body_len).unwrap_or(u32::MAX).to_le_bytes());
        out.extend_from_slice(&self.key);
        for n in [
            self.prompt_tokens,
            self.completion_tokens,
            self.latency_us,
            self.created_at,
        ] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out.extend_from_slice(
            &u32::try_from(self.model.len())
                .unwrap_or(u32::MAX)
                .to_le_bytes(),
        );
        out.extend_from_slice(self.model.as_bytes());
        out.extend_from_slice(self.response.as_bytes());
        let hash = check(&out[4..]);
        out.extend_from_slice(&hash);
        out
    }

    /// The rows of a log, up to the first record that is cut short or
    /// does not match its check.
    fn read_log(mut bytes: &[u8]) -> Vec<ChatRow> {
        let mut rows = Vec::new();
        while let Some((row, rest)) = Self::read_record(bytes) {
            rows.push(row);
            bytes = rest;
        }
        rows
    }

    fn read_record(bytes: &[u8]) -> Option<(ChatRow, &[u8])> {
        let (len, rest) = bytes.split_first_chunk::<4>()?;
        let len = usize::try_from(u32::from_le_bytes(*len)).ok()?;
        let body = rest.get(..len)?;
        let (hash, rest) = rest.get(len..)?.split_first_chunk::<8>()?;
        if check(body) != *hash {
            return None;
        }
        let (key, body) = body.split_first_chunk::<32>()?;
        let mut numbers = [0i64; 4];
        let mut body = body;
        for n in &mut numbers {
            let (bytes, tail) = body.split_first_chunk::<8>()?;
            *n = i64::from_le_bytes(*bytes);
            body = tail;
        }
        let (model_len, body) = body.split_first_chunk::<4>()?;
        let model_len = usize::try_from(u32::from_le_bytes(*model_len)).ok()?;
        let model = std::str::from_utf8(body.get(..model_len)?).ok()?;
        let response = std::str::from_utf8(body.get(model_len..)?).ok()?;
        let [prompt_tokens, completion_tokens, latency_us, created_at] = numbers;
        let row = ChatRow {
            key: *key,
            model: model.to_owned(),
            response: response.to_owned(),
            prompt_tokens,
            completion_tokens,
            latency_us,
            created_at,
        };
        Some((row, rest))
    }
}

/// A record's check: the first 8 bytes of its body's SHA-256, the hash
/// the crate already has (and `sha2` uses the CPU's SHA instructions
/// where there are some).
fn check(body: &[u8]) -> [u8; 8] {
    let digest = Sha256::digest(body);
    let mut head = [0u8; 8];
    head.copy_from_slice(&digest[..8]);
    head
}

/// The answer a stored JSON text holds, marked [`Source::Cache`]; `None`
/// when it no longer decodes.
fn decode_chat(text: &str) -> Option<ChatResponse> {
    let mut resp = serde_json::from_str::<ChatResponse>(text).ok()?;
    resp.source = Source::Cache;
    Some(resp)
}

/// This process's log of answers not yet folded into the table, locked
/// for as long as the process holds it open.
#[derive(Debug)]
struct Log {
    file: File,
    path: PathBuf,
    bytes: u64,
}

/// Logs of the cache at `cache` are named `<file name>-log-<suffix>`.
const LOG_TAG: &str = "-log-";

/// A log is created as `<file name>-new-<suffix>`, then renamed.
const DRAFT_TAG: &str = "-new-";

/// A draft lives for the moment between its creation and its rename; an
/// unlocked one this old was left by a process killed in that moment.
const STALE_DRAFT: Duration = Duration::from_secs(60);

/// `<file name><tag><suffix>` beside the cache at `cache`.
fn sibling(cache: &Path, tag: &str, suffix: &str) -> PathBuf {
    let mut name = cache.file_name().unwrap_or_default().to_os_string();
    name.push(tag);
    name.push(suffix);
    cache.with_file_name(name)
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::new(
        FailureKind::Cache,
        format!("cannot {what} {}: {e}", path.display()),
    )
}

impl Log {
    /// A new, locked log. It is created and locked under another name and
    /// then renamed, so no process opening the cache meanwhile can take it
    /// for the log of a dead one.
    fn create(cache: &Path) -> Result<Log, Error> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let suffix = format!("{}-{nanos}", std::process::id());
        let draft = sibling(cache, DRAFT_TAG, &suffix);
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&draft)
            .map_err(|e| io_error("create", &draft, e))?;
        file.try_lock()
            .map_err(|e| io_error("lock", &draft, e.into()))?;
        let path = sibling(cache, LOG_TAG, &suffix);
        std::fs::rename(&draft, &path).map_err(|e| io_error("rename", &draft, e))?;
        Ok(Log {
            file,
            path,
            bytes: 0,
        })
    }

    /// Appends one record with one `write`.
    fn append(&mut self, record: &[u8]) -> Result<(), Error> {
        self.file
            .write_all(record)
            .map_err(|e| io_error("write", &self.path, e))?;
        self.bytes += record.len() as u64;
        Ok(())
    }

    /// Empties the log once all it holds is in the table.
    fn empty(&mut self) -> Result<(), Error> {
        if self.bytes > 0 {
            self.file
                .set_len(0)
                .map_err(|e| io_error("empty", &self.path, e))?;
            self.bytes = 0;
        }
        Ok(())
    }
}

/// Commits the rows of every log no living process holds (its owner died
/// before folding it), then removes it; removes stale drafts too.
fn fold_orphan_logs(
    cache: &Path,
    writer: &Mutex<Connection>,
    index: &Mutex<ChatIndex>,
) -> Result<(), Error> {
    let (stem, draft_stem) = (sibling(cache, LOG_TAG, ""), sibling(cache, DRAFT_TAG, ""));
    let (Some(dir), Some(stem), Some(draft_stem)) =
        (stem.parent(), stem.file_name(), draft_stem.file_name())
    else {
        return Ok(());
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let entries = std::fs::read_dir(dir).map_err(|e| io_error("list", dir, e))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if is_sibling(&name, draft_stem) {
            remove_stale_draft(&entry.path());
            continue;
        }
        if !is_sibling(&name, stem) {
            continue;
        }
        let path = entry.path();
        let mut file = match OpenOptions::new().read(true).write(true).open(&path) {
            Ok(file) => file,
            // Folded and removed by another process just now.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_error("open", &path, e)),
        };
        match file.try_lock() {
            Ok(()) => {}
            // Its owner is alive.
            Err(std::fs::TryLockError::WouldBlock) => continue,
            Err(std::fs::TryLockError::Error(e)) => return Err(io_error("lock", &path, e)),
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| io_error("read", &path, e))?;
        let mut rows = ChatRow::read_log(&bytes);
        // Its owner folded most of it before it died: keep only the rows
        // whose key the table does not hold.
        {
            let mut index = index.lock().map_err(|_| poisoned())?;
            index.catch_up(&*writer.lock().map_err(|_| poisoned())?)?;
            rows.retain(|row| !index.ids.contains_key(&prefix(&row.key)));
        }
        commit_rows(writer, index, rows.iter())?;
        // Emptied first: a process that opened it before the removal and
        // locks it after finds nothing to fold again.
        file.set_len(0).map_err(|e| io_error("empty", &path, e))?;
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error("remove", &path, e)),
        }
    }
    Ok(())
}

/// Whether `name` is `stem` and a suffix `Log::create` makes,
/// `<pid>-<nanos>`: another file that merely starts like a log (say a
/// second cache called `<file name>-log-old`) is never folded or removed.
fn is_sibling(name: &OsStr, stem: &OsStr) -> bool {
    let Some(suffix) = name
        .as_encoded_bytes()
        .strip_prefix(stem.as_encoded_bytes())
    else {
        return false;
    };
    let mut parts = suffix.split(|b| *b == b'-');
    let number = |part: Option<&[u8]>| {
        part.is_some_and(|p| !p.is_empty() && p.iter().all(u8::is_ascii_digit))
    };
    number(parts.next()) && number(parts.next()) && parts.next().is_none()
}

/// Removes the draft at `path` if no process holds it and it is older than
/// [`STALE_DRAFT`]. Nothing is written to a draft, so nothing is lost; a
/// draft that cannot be removed only takes a directory entry, so failures
/// are left for the next open.
fn remove_stale_draft(path: &Path) {
    let stale = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|at| at.elapsed().is_ok_and(|age| age > STALE_DRAFT));
    if !stale {
        return;
    }
    if let Ok(file) = File::open(path) {
        if file.try_lock().is_ok() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Creates the tables of a new file, converts a version 1 file, and
/// refuses any other version.
fn prepare_tables(conn: &Connection, path: &Path) -> Result<(), Error> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    )?;
    let version: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE name = 'format_version'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    match version.as_deref() {
        None => {
            conn.execute_batch(&format!("{CHAT_TABLE}; {EMBEDDING_TABLE};"))?;
        }
        Some("1") => {
            // Version 1 keyed chat rows by hex text in a B-tree index.
            conn.execute_batch(&format!(
                "ALTER TABLE chat RENAME TO chat_v1;
                 {CHAT_TABLE};
                 INSERT INTO chat (key, model, response, prompt_tokens, completion_tokens,
                                   latency_us, created_at)
                     SELECT unhex(key), model, response, prompt_tokens, completion_tokens,
                            latency_us, created_at
                     FROM chat_v1 WHERE length(key) = 64 AND unhex(key) IS NOT NULL
                     ORDER BY rowid;
                 DROP TABLE chat_v1;"
            ))?;
        }
        Some(v) if v == CACHE_FORMAT_VERSION.to_string() => return Ok(()),
        Some(v) => {
            return Err(Error::new(
                FailureKind::Cache,
                format!(
                    "{} has cache format {v}, this build reads {CACHE_FORMAT_VERSION}; clear it",
                    path.display()
                ),
            ))
        }
    }
    conn.execute(
        "INSERT OR REPLACE INTO meta (name, value) VALUES ('format_version', ?1)",
        [CACHE_FORMAT_VERSION.to_string()],
    )?;
    Ok(())
}

/// The folder thread's share of the cache.
struct Folder {
    writer: Arc<Mutex<Connection>>,
    index: Arc<Mutex<ChatIndex>>,
    log: Arc<Mutex<Log>>,
    /// Rows received and not yet committed (after a failed commit, they
    /// are tried again with the next group; they stay in the log).
    unfolded: Vec<Arc<ChatRow>>,
}

impl Folder {
    /// Gathers rows for [`FOLD_EVERY`] from the first one, commits them in
    /// one transaction, and empties the log when asked, when it has grown
    /// past [`LOG_LIMIT`], and at the end.
    fn run(mut self, queue: &mpsc::Receiver<Fold>) {
        while let Ok(first) = queue.recv() {
            if matches!(first, Fold::Row(_)) {
                // Parked, not waiting on the queue: each arrival would
                // otherwise wake this thread once. A flush or the cache's
                // drop unparks it early.
                std::thread::park_timeout(FOLD_EVERY);
            }
            let mut asks = Vec::new();
            self.receive(first, &mut asks);
            let closed = self.drain(queue, &mut asks);
            let full = self.log.lock().map_or(true, |log| log.bytes >= LOG_LIMIT);
            let result = if asks.is_empty() && !closed && !full {
                self.fold()
            } else {
                self.fold_and_empty(queue, &mut asks)
            };
            for ask in asks {
                // One who stopped waiting no longer needs the outcome.
                let _ = ask.send(result.clone());
            }
            if closed {
                break;
            }
        }
        // The cache is gone. Whatever could not be committed stays in the
        // log, for the next process that opens the cache.
        if let (Ok(log), true) = (self.log.lock(), self.unfolded.is_empty()) {
            let _ = std::fs::remove_file(&log.path);
        }
    }

    fn receive(&mut self, fold: Fold, asks: &mut Vec<mpsc::Sender<Result<(), Error>>>) {
        match fold {
            Fold::Row(row) => self.unfolded.push(row),
            Fold::Now(ask) => asks.push(ask),
        }
    }

    /// Takes what is waiting; true once the cache is gone.
    fn drain(
        &mut self,
        queue: &mpsc::Receiver<Fold>,
        asks: &mut Vec<mpsc::Sender<Result<(), Error>>>,
    ) -> bool {
        loop {
            match queue.try_recv() {
                Ok(fold) => self.receive(fold, asks),
                Err(mpsc::TryRecvError::Empty) => return false,
                Err(mpsc::TryRecvError::Disconnected) => return true,
            }
        }
    }

    /// Commits the rows received, then forgets them from memory.
    fn fold(&mut self) -> Result<(), Error> {
        if self.unfolded.is_empty() {
            return Ok(());
        }
        commit_rows(
            &self.writer,
            &self.index,
            self.unfolded.iter().map(|r| &**r),
        )?;
        let mut index = self.index.lock().map_err(|_| poisoned())?;
        for row in self.unfolded.drain(..) {
            let at = prefix(&row.key);
            // Unless stored again meanwhile.
            if index.pending.get(&at).is_some_and(|p| Arc::ptr_eq(p, &row)) {
                index.pending.remove(&at);
            }
        }
        Ok(())
    }

    /// Commits every row in the log and empties it. Rows are logged and
    /// sent under the log's lock, so holding it, every row in the log is
    /// in the queue or already received.
    fn fold_and_empty(
        &mut self,
        queue: &mpsc::Receiver<Fold>,
        asks: &mut Vec<mpsc::Sender<Result<(), Error>>>,
    ) -> Result<(), Error> {
        let log = Arc::clone(&self.log);
        let mut log = log.lock().map_err(|_| poisoned())?;
        self.drain(queue, asks);
        self.fold()?;
        log.empty()
    }
}

/// Appends `rows` in one transaction, deleting the rows they replace that
/// this process knows of, then indexes them.
fn commit_rows<'a>(
    writer: &Mutex<Connection>,
    index: &Mutex<ChatIndex>,
    rows: impl Iterator<Item = &'a ChatRow> + Clone,
) -> Result<(), Error> {
    let replaced: Vec<(i64, &[u8; 32])> = {
        let index = index.lock().map_err(|_| poisoned())?;
        rows.clone()
            .filter_map(|row| Some((*index.ids.get(&prefix(&row.key))?, &row.key)))
            .collect()
    };
    let conn = writer.lock().map_err(|_| poisoned())?;
    // Cached statements: `Connection::transaction` parses BEGIN and COMMIT
    // anew for every group.
    conn.prepare_cached("BEGIN")?.execute([])?;
    let mut appended = Vec::new();
    let written = (|| -> Result<(), Error> {
        for (id, key) in &replaced {
            conn.prepare_cached("DELETE FROM chat WHERE id = ?1 AND key = ?2")?
                .execute(params![id, &key[..]])?;
        }
        let mut insert = conn.prepare_cached(
            "INSERT INTO chat
             (key, model, response, prompt_tokens, completion_tokens, latency_us, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for row in rows.clone() {
            insert.execute(params![
                &row.key[..],
                row.model,
                row.response,
                row.prompt_tokens,
                row.completion_tokens,
                row.latency_us,
                row.created_at,
            ])?;
            appended.push((prefix(&row.key), conn.last_insert_rowid()));
        }
        drop(insert);
        conn.prepare_cached("COMMIT")?.execute([])?;
        Ok(())
    })();
    if let Err(e) = written {
        // Leaves the connection usable for the next group.
        let _ = conn.execute_batch("ROLLBACK");
        return Err(e);
    }
    drop(conn);
    let mut index = index.lock().map_err(|_| poisoned())?;
    // One transaction's ids run on without a gap. When they start right
    // after the last row read, no other process's row lies between, and
    // the next catch-up need not read these again.
    if let (Some(&(_, first)), Some(&(_, last))) = (appended.first(), appended.last()) {
        if first == index.seen + 1 {
            index.seen = last;
        }
    }
    index.ids.extend(appended);
    Ok(())
}

fn poisoned() -> Error {
    Error::new(FailureKind::Cache, "cache lock poisoned")
}

fn stopped() -> Error {
    Error::new(FailureKind::Cache, "the cache's folder thread has stopped")
}

fn clamp_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| clamp_i64(d.as_secs()))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(n: i64, response: &str) -> ChatRow {
        ChatRow {
            key: [u8::try_from(n).unwrap_or(0); 32],
            model: "m".into(),
            response: response.into(),
            prompt_tokens: n,
            completion_tokens: 2 * n,
            latency_us: 3 * n,
            created_at: 4 * n,
        }
    }

    #[test]
    fn a_log_reads_back_up_to_its_first_damaged_record() {
        let (a, b, c) = (row(1, "{\"a\":1}"), row(2, "é"), row(3, ""));
        let mut log = [a.record(), b.record(), c.record()].concat();
        let read = ChatRow::read_log(&log);
        assert_eq!(read.len(), 3);
        for (got, want) in read.iter().zip([&a, &b, &c]) {
            assert_eq!(
                (got.key, &got.model, &got.response),
                (want.key, &want.model, &want.response)
            );
            assert_eq!(
                [
                    got.prompt_tokens,
                    got.completion_tokens,
                    got.latency_us,
                    got.created_at
                ],
                [
                    want.prompt_tokens,
                    want.completion_tokens,
                    want.latency_us,
                    want.created_at
                ]
            );
        }
        // A byte changed in the second record: the first is all there is.
        let second = a.record().len() + 10;
        log[second] ^= 1;
        assert_eq!(ChatRow::read_log(&log).len(), 1);
        // Cut short in the middle of the third.
        let whole = [a.record(), b.record(), c.record()].concat();
        assert_eq!(ChatRow::read_log(&whole[..whole.len() - 3]).len(), 2);
    }
}
