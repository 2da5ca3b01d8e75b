//! The response cache: one SQLite file in WAL mode.
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

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OptionalExtension};
use tokio::sync::oneshot;

use crate::key::RequestKey;
use crate::model::{ChatResponse, Source};
use crate::spec::CacheLocation;
use crate::{Error, ErrorKind};

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

/// Most rows committed in one group transaction.
const MAX_GROUP: usize = 512;

/// How long the writer holds a group open while other answers are on
/// their way. A commit costs about as much CPU as the HTTP exchange that
/// fetched the answer, whether it holds one row or fifty; a few
/// milliseconds on a judge call of a hundred or more is the cheaper price.
const GROUP_HOLD: Duration = Duration::from_millis(5);

/// How often, at most, a lookup that misses the in-memory index reads the
/// rows other processes appended (see [`Cache::with_catch_up_interval`]).
pub const CATCH_UP_EVERY: Duration = Duration::from_millis(100);

type Commit = (ChatRow, oneshot::Sender<Result<(), Error>>);

/// An open cache file, shareable across tasks.
#[derive(Debug)]
pub struct Cache {
    path: PathBuf,
    writer: Arc<Mutex<Connection>>,
    commits: mpsc::Sender<Commit>,
    readers: Vec<Mutex<Connection>>,
    next_reader: AtomicUsize,
    index: Arc<Mutex<ChatIndex>>,
    /// Answers being fetched that will be stored here (see [`Cache::expect_answer`]).
    expected: Arc<AtomicUsize>,
    catch_up_every: Duration,
}

/// An answer on its way to the cache, counted until dropped.
#[derive(Debug)]
pub struct Expected(Arc<AtomicUsize>);

impl Drop for Expected {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Where this process knows chat answers to be: row id by the key's first
/// 8 bytes, for rows up to `seen` plus the ones it appended itself.
#[derive(Debug, Default)]
struct ChatIndex {
    ids: HashMap<u64, i64>,
    seen: i64,
    caught_up_at: Option<Instant>,
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

impl Cache {
    /// Opens (creating if needed) the cache file at `path`, with its parent folders.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                Error::new(
                    ErrorKind::Cache,
                    format!("cannot create {}: {e}", parent.display()),
                )
            })?;
        }
        let conn = Connection::open(&path)?;
        // WAL lets readers go on while one writer appends; NORMAL sync is
        // durable across process crashes, which is what a killed run needs.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
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
            reader.busy_timeout(std::time::Duration::from_secs(10))?;
            readers.push(Mutex::new(reader));
        }
        let writer = Arc::new(Mutex::new(conn));
        let index = Arc::new(Mutex::new(ChatIndex::default()));
        let (commits, queue) = mpsc::channel();
        let expected = Arc::new(AtomicUsize::new(0));
        let group = Group {
            writer: Arc::clone(&writer),
            index: Arc::clone(&index),
            expected: Arc::clone(&expected),
        };
        // The thread ends when the cache (the only sender) is dropped.
        std::thread::Builder::new()
            .name("assay-cache-writer".into())
            .spawn(move || group.run(&queue))
            .map_err(|e| Error::new(ErrorKind::Cache, format!("cannot start cache writer: {e}")))?;
        Ok(Cache {
            path,
            writer,
            commits,
            readers,
            next_reader: AtomicUsize::new(0),
            index,
            expected,
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

    /// Reads into the index the chat rows appended since it last looked.
    fn catch_up(&self, index: &mut ChatIndex) -> Result<(), Error> {
        let reader = self.reader()?;
        let mut stmt =
            reader.prepare_cached("SELECT id, key FROM chat WHERE id > ?1 ORDER BY id")?;
        let mut rows = stmt.query([index.seen])?;
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            // A row whose key is not 32 bytes cannot answer any request.
            let key = row.get_ref(1)?;
            if let Ok(digest) = <[u8; 32]>::try_from(key.as_blob().unwrap_or_default()) {
                index.ids.insert(prefix(&digest), id);
            }
            index.seen = id;
        }
        Ok(())
    }

    /// The row id the index gives for `digest`, catching up on a miss
    /// unless it did so within the catch-up interval.
    fn chat_id(&self, digest: &[u8; 32]) -> Result<Option<i64>, Error> {
        let mut index = self.index()?;
        if let Some(id) = index.ids.get(&prefix(digest)) {
            return Ok(Some(*id));
        }
        if index
            .caught_up_at
            .is_some_and(|at| at.elapsed() < self.catch_up_every)
        {
            return Ok(None);
        }
        self.catch_up(&mut index)?;
        index.caught_up_at = Some(Instant::now());
        Ok(index.ids.get(&prefix(digest)).copied())
    }

    /// The stored answer for `key`, marked [`Source::Cache`].
    pub fn get_chat(&self, key: &RequestKey) -> Result<Option<ChatResponse>, Error> {
        let digest = key.digest();
        let Some(id) = self.chat_id(&digest)? else {
            return Ok(None);
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
        match serde_json::from_str::<ChatResponse>(&text) {
            Ok(mut resp) => {
                resp.source = Source::Cache;
                Ok(Some(resp))
            }
            Err(_) => {
                self.writer()?
                    .prepare_cached("DELETE FROM chat WHERE id = ?1")?
                    .execute([id])?;
                Ok(None)
            }
        }
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

    /// Stores a validated answer like [`Cache::put_chat`], but through the
    /// group-commit writer: answers completing at the same time share one
    /// transaction, so many concurrent requests do not pay one commit each.
    /// Returns once the row is committed.
    pub async fn store_chat(
        &self,
        key: &RequestKey,
        model: &str,
        response: &ChatResponse,
    ) -> Result<(), Error> {
        let row = ChatRow::new(key, model, response)?;
        let (done, committed) = oneshot::channel();
        let stopped = || Error::new(ErrorKind::Cache, "the cache writer has stopped");
        self.commits.send((row, done)).map_err(|_| stopped())?;
        committed.await.map_err(|_| stopped())?
    }

    /// Counts an answer that is being fetched and will be stored with
    /// [`Cache::store_chat`], until the returned guard is dropped. While
    /// more answers are expected than are waiting, the writer holds its
    /// group open for a few milliseconds, so they share one commit; a lone
    /// answer is committed at once.
    pub fn expect_answer(&self) -> Expected {
        self.expected.fetch_add(1, Ordering::Relaxed);
        Expected(Arc::clone(&self.expected))
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

    /// Counts of what is stored (`assay cache stats`).
    pub fn stats(&self) -> Result<CacheStats, Error> {
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
        let conn = self.writer()?;
        let removed =
            conn.execute("DELETE FROM chat", [])? + conn.execute("DELETE FROM embedding", [])?;
        conn.execute_batch("VACUUM; PRAGMA wal_checkpoint(TRUNCATE);")?;
        self.index()?.ids.clear();
        Ok(removed as u64)
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
}

impl ChatRow {
    fn new(key: &RequestKey, model: &str, response: &ChatResponse) -> Result<Self, Error> {
        let json = serde_json::to_string(response)
            .map_err(|e| Error::new(ErrorKind::Cache, format!("cannot encode answer: {e}")))?;
        Ok(ChatRow {
            key: key.digest(),
            model: model.to_owned(),
            response: json,
            prompt_tokens: clamp_i64(response.usage.prompt_tokens),
            completion_tokens: clamp_i64(response.usage.completion_tokens),
            latency_us: clamp_i64(u64::try_from(response.latency.as_micros()).unwrap_or(u64::MAX)),
        })
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
                ErrorKind::Cache,
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

/// The writer thread's share of the cache.
struct Group {
    writer: Arc<Mutex<Connection>>,
    index: Arc<Mutex<ChatIndex>>,
    expected: Arc<AtomicUsize>,
}

impl Group {
    /// Takes whatever rows are waiting (up to [`MAX_GROUP`]), waits
    /// [`GROUP_HOLD`] for more if more are expected, commits them in one
    /// transaction and tells every waiter the outcome.
    fn run(&self, queue: &mpsc::Receiver<Commit>) {
        let take = |group: &mut Vec<Commit>| {
            while group.len() < MAX_GROUP {
                match queue.try_recv() {
                    Ok(next) => group.push(next),
                    Err(_) => break,
                }
            }
        };
        while let Ok(first) = queue.recv() {
            let mut group = vec![first];
            take(&mut group);
            // Sleeping, not waiting on the queue: each arrival would
            // otherwise wake this thread once.
            if self.expected.load(Ordering::Relaxed) > group.len() && group.len() < MAX_GROUP {
                std::thread::sleep(GROUP_HOLD);
                take(&mut group);
            }
            let result = commit_rows(&self.writer, &self.index, group.iter().map(|(row, _)| row));
            for (_, done) in group {
                // A waiter that went away no longer needs the outcome.
                let _ = done.send(result.clone());
            }
        }
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
    let created_at = now_secs();
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
                created_at,
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
    Error::new(ErrorKind::Cache, "cache lock poisoned")
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
