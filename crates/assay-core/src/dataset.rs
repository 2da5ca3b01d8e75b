//! Streaming dataset readers: JSONL, a JSON array, CSV, or stdin; and
//! OTLP trace exports ([`crate::otlp`]), one row per trace.
//!
//! Rows come one at a time so memory stays flat however long the input is,
//! but for a fixed-size digest per explicit `id` to catch repeats (an OTLP
//! export is read whole, since a trace's spans may lie anywhere in it).
//! A bad row is an `Err` item naming file, line and field; the rows after it
//! still come. A leading UTF-8 byte order mark is skipped, and a row whose
//! explicit `id` an earlier row already had is a bad row too.

use crate::json::kind;
use crate::otlp::{Events, Stitch, Stitched};
use crate::read::{csv_object, CheckedRow};
pub use crate::read::{DatasetError, Position};
use crate::references::{References, ReferencesReport};
use crate::sample::Sample;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::fs::File;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};

/// How rows are encoded; serialised as `--input-format` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Format {
    #[serde(rename = "jsonl")]
    Jsonl,
    #[serde(rename = "json")]
    JsonArray,
    #[serde(rename = "csv")]
    Csv,
    #[serde(rename = "otlp")]
    Otlp,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Jsonl => "jsonl",
            Format::JsonArray => "json",
            Format::Csv => "csv",
            Format::Otlp => "otlp",
        })
    }
}

impl FromStr for Format {
    type Err = DatasetError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "jsonl" | "ndjson" => Ok(Format::Jsonl),
            "json" => Ok(Format::JsonArray),
            "csv" => Ok(Format::Csv),
            "otlp" => Ok(Format::Otlp),
            other => Err(DatasetError::UnknownFormat(other.to_string())),
        }
    }
}

/// Where rows come from: a file, `-` for standard input, or a file that
/// stands for other data, named in messages as that data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Path(PathBuf),
    Stdin,
    /// The file at `path` holds the rows of `of`.
    Copy {
        path: PathBuf,
        of: Original,
    },
}

/// What a [`Source::Copy`] stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Original {
    /// Rows given in memory (a list of dicts, a DataFrame), written one per
    /// line: a row is named by its place in the data, `data row 3 (index
    /// 2)`, not by the file it went through.
    Rows,
    /// Another file, read here from a copy (on another machine): named as
    /// that file.
    File(String),
}

impl Source {
    /// `-` means standard input.
    pub fn parse(arg: &str) -> Source {
        if arg == "-" {
            Source::Stdin
        } else {
            Source::Path(PathBuf::from(arg))
        }
    }

    /// The name used in messages: the path, `<stdin>`, `data` for rows
    /// given in memory, or the name of the file a copy stands for.
    pub fn display_name(&self) -> String {
        match self {
            Source::Path(p) => p.display().to_string(),
            Source::Stdin => "<stdin>".to_string(),
            Source::Copy {
                of: Original::Rows, ..
            } => "data".to_string(),
            Source::Copy {
                of: Original::File(name),
                ..
            } => name.clone(),
        }
    }

    /// The file read, unless it is standard input.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Source::Path(path) | Source::Copy { path, .. } => Some(path),
            Source::Stdin => None,
        }
    }
}

/// Where a row is in its input, for messages: `data.jsonl:12` or
/// `data.json[element 3]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub position: Position,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Position::Line(n) => write!(f, "{}:{n}", self.file),
            Position::Element(n) => write!(f, "{}[element {n}]", self.file),
            Position::Trace(n) => write!(f, "{}[trace {n}]", self.file),
            Position::Row(n) => write!(f, "{} row {n} (index {})", self.file, n - 1),
        }
    }
}

/// One row that could not be turned into a [`Sample`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {}{message}", field.as_ref().map(|f| format!("field '{f}': ")).unwrap_or_default())]
pub struct RowError {
    /// 1-based data row number, as [`Sample::row`].
    pub row: u64,
    pub location: Location,
    /// The field at fault, as written in the input, when one is.
    pub field: Option<String>,
    pub message: String,
}

/// A row read from the input: a sample and where it came from, or why not.
pub type Row = Result<(Sample, Location), RowError>;

/// Opens a dataset. `format` overrides detection; without it, an input
/// that starts `{"resourceSpans"` is an OTLP export, else the extension
/// decides (`.jsonl`/`.ndjson`, `.json`, `.csv`), else the first non-blank
/// byte: `[` is a JSON array, anything else JSONL.
pub fn open(source: &Source, format: Option<Format>) -> Result<Rows, DatasetError> {
    open_with(source, format, &InputOptions::default())
}

/// Opens a dataset as [`open`] does, its rows joined and stitched as
/// `options` say.
pub fn open_with(
    source: &Source,
    format: Option<Format>,
    options: &InputOptions,
) -> Result<Rows, DatasetError> {
    let references = options
        .references
        .as_deref()
        .map(References::load)
        .transpose()?;
    let file = source.display_name();
    let io_err = |source| DatasetError::Io {
        file: file.clone(),
        source,
    };
    let raw: Box<dyn Read + Send> = match source.file() {
        Some(p) => Box::new(File::open(p).map_err(io_err)?),
        None => Box::new(io::stdin()),
    };
    let bytes = Arc::new(AtomicU64::new(0));
    let counted = Box::new(Counting {
        inner: raw,
        bytes: Arc::clone(&bytes),
    });
    // Before sniffing, so a marked JSON array still starts with `[`.
    let reader = skip_bom(counted).map_err(io_err)?;
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let format = match format {
        Some(f) => f,
        None if is_otlp(&mut reader).map_err(io_err)? => Format::Otlp,
        None => match by_extension(source) {
            Some(f) => f,
            None => sniff(&mut reader).map_err(io_err)?,
        },
    };
    if let (Some(logs), false) = (&options.logs, format == Format::Otlp) {
        return Err(DatasetError::Malformed {
            file: logs.display().to_string(),
            message: format!(
                "a logs export (--logs) gives the messages of an OTLP trace export's spans, \
                 but {file} is read as {format}"
            ),
        });
    }
    let mut stitched = None;
    let inner = match format {
        Format::Jsonl => Inner::Jsonl {
            lines: reader,
            line: 0,
            buf: Vec::new(),
            by_place: matches!(
                source,
                Source::Copy {
                    of: Original::Rows,
                    ..
                }
            ),
        },
        Format::Csv => csv_rows(reader, &file)?,
        Format::JsonArray => json_array_rows(reader, file.clone()),
        Format::Otlp => {
            let events = options.logs.as_deref().map(read_logs).transpose()?;
            let export = crate::otlp::read_with(reader, options.stitch, events.as_ref()).map_err(
                |message| DatasetError::Malformed {
                    file: file.clone(),
                    message,
                },
            )?;
            stitched = export.stitched;
            Inner::Otlp(export.traces.into_iter())
        }
    };
    Ok(Rows {
        file,
        format,
        inner,
        row: 0,
        bytes,
        first_with_id: HashMap::default(),
        unnamed: Vec::new(),
        references,
        stitched,
        peeked: None,
        finished: false,
    })
}

/// The GenAI log events of the OTLP logs export at `path` ([`Events`]).
fn read_logs(path: &Path) -> Result<Events, DatasetError> {
    let file = path.display().to_string();
    let reader = File::open(path).map_err(|source| DatasetError::Io {
        file: file.clone(),
        source,
    })?;
    let reader = skip_bom(Box::new(reader)).map_err(|source| DatasetError::Io {
        file: file.clone(),
        source,
    })?;
    Events::read(BufReader::new(reader))
        .map_err(|message| DatasetError::Malformed { file, message })
}

/// The UTF-8 byte order mark, which Windows tools write first.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// How much of the input is read ahead of the rows, for the mark and
/// for [`is_otlp`] to look at.
const HEAD: usize = 64;

/// `reader` without a leading [`BOM`]. The first [`HEAD`] bytes are read
/// to the end (a pipe may hand them over one at a time) and put back, less
/// the mark.
fn skip_bom(mut reader: Box<dyn Read + Send>) -> io::Result<Box<dyn Read + Send>> {
    let mut head = Vec::with_capacity(HEAD);
    reader.by_ref().take(HEAD as u64).read_to_end(&mut head)?;
    if head.starts_with(BOM) {
        head.drain(..BOM.len());
    }
    Ok(Box::new(io::Cursor::new(head).chain(reader)))
}

fn by_extension(source: &Source) -> Option<Format> {
    match source
        .file()?
        .extension()?
        .to_str()?
        .to_ascii_lowercase()
        .as_str()
    {
        "jsonl" | "ndjson" => Some(Format::Jsonl),
        "json" => Some(Format::JsonArray),
        "csv" => Some(Format::Csv),
        _ => None,
    }
}

/// Whether the input starts `{"resourceSpans"` (blanks aside, within the
/// [`HEAD`] the buffer holds first): an OTLP export, whatever its
/// extension.
fn is_otlp(reader: &mut impl BufRead) -> io::Result<bool> {
    let buf = reader.fill_buf()?;
    let mut rest = buf.iter().skip_while(|b| b.is_ascii_whitespace());
    if rest.next() != Some(&b'{') {
        return Ok(false);
    }
    let key: Vec<u8> = rest
        .skip_while(|b| b.is_ascii_whitespace())
        .take(b"\"resourceSpans\"".len())
        .copied()
        .collect();
    Ok(key == b"\"resourceSpans\"")
}

fn sniff(reader: &mut impl BufRead) -> io::Result<Format> {
    loop {
        let buf = reader.fill_buf()?;
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => {
                let first = buf[i];
                return Ok(if first == b'[' {
                    Format::JsonArray
                } else {
                    Format::Jsonl
                });
            }
            None if buf.is_empty() => return Ok(Format::Jsonl),
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    }
}

/// The rows of one input, in order.
pub struct Rows {
    file: String,
    format: Format,
    inner: Inner,
    row: u64,
    bytes: Arc<AtomicU64>,
    /// Each explicit id read so far, as [`id_digest`], to the row number and
    /// the line or element number of the first row with it. Digests rather
    /// than the ids keep this at a fixed size per row however long the ids.
    first_with_id: HashMap<u128, (u64, u64), BuildHasherDefault<DigestBits>>,
    /// The rows read so far that wrote no id and so go by their number, as
    /// ascending runs `(first, last)`: one entry for a wholly unnamed input.
    unnamed: Vec<(u64, u64)>,
    /// Joined onto each row.
    references: Option<References>,
    stitched: Option<Stitched>,
    /// A row read ahead by [`Rows::check_not_empty`].
    peeked: Option<Row>,
    /// Whether the input's end was reached.
    finished: bool,
}

enum Inner {
    Jsonl {
        lines: BufReader<Box<dyn Read + Send>>,
        line: u64,
        buf: Vec<u8>,
        /// Rows given in memory: a line is named as a row
        /// ([`Position::Row`]).
        by_place: bool,
    },
    Csv {
        records: csv::StringRecordsIntoIter<LineBreaks>,
        headers: Vec<String>,
        breaks: Breaks,
    },
    /// Elements parsed on a reader thread, handed over through a bounded
    /// channel so a huge array never sits in memory.
    JsonArray(mpsc::Receiver<ArrayItem>),
    Otlp(std::vec::IntoIter<crate::otlp::Trace>),
    Done,
}

enum ArrayItem {
    Element(CheckedRow),
    /// The array is malformed at this line; nothing after it can be read.
    Error {
        message: String,
        line: u64,
    },
}

impl Rows {
    /// An error saying why, when the input holds no row at all (a row
    /// that cannot be read is a row): a run over nothing would print a
    /// table of zeros. The first row is read ahead and kept.
    pub fn check_not_empty(&mut self) -> Result<(), DatasetError> {
        if self.peeked.is_none() {
            self.peeked = self.next();
        }
        if self.peeked.is_some() {
            return Ok(());
        }
        let why = match self.format {
            Format::Jsonl => "it holds no line with a row (it is empty, or blank)",
            Format::Csv => "it holds no row below its header (or no header either)",
            Format::JsonArray => "the JSON array is empty",
            Format::Otlp => "the export holds no span",
        };
        Err(DatasetError::Empty {
            file: self.file.clone(),
            why: why.to_string(),
        })
    }

    /// What joining and stitching did, so far; `None` when neither did
    /// anything.
    pub fn report(&self) -> Option<InputReport> {
        let report = InputReport {
            stitched: self.stitched.clone(),
            references: self.references.as_ref().map(|r| r.report(self.finished)),
        };
        (!report.is_empty()).then_some(report)
    }

    /// The format the rows are read in: as given, else from the extension,
    /// else from the first byte.
    pub fn format(&self) -> Format {
        self.format
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    /// Bytes taken from the input so far (read-ahead included), for
    /// progress estimates.
    pub fn bytes_read(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    fn location(&self, position: Position) -> Location {
        Location {
            file: self.file.clone(),
            position,
        }
    }

    fn row_error(&self, at: Position, field: Option<String>, message: String) -> RowError {
        RowError {
            row: self.row,
            location: self.location(at),
            field,
            message,
        }
    }

    /// The error of a row in which an object names `key` twice.
    fn repeated_key(&self, at: Position, key: String) -> RowError {
        let message = "named twice in one object: which value is meant is unclear";
        self.row_error(at, Some(key), message.to_string())
    }

    fn row_from_checked(&mut self, checked: CheckedRow, at: Position) -> Row {
        if let Some(key) = checked.repeated {
            return Err(self.repeated_key(at, key));
        }
        match checked.entries {
            Ok(entries) => self.row_from_object(entries, at),
            Err(other) => Err(self.row_error(
                at,
                None,
                format!("expected an object, got {}", kind(&other)),
            )),
        }
    }

    /// The sample of a row's entries, in the order written.
    fn row_from_object(&mut self, mut entries: Vec<(String, Value)>, at: Position) -> Row {
        if let Some(references) = self.references.as_mut() {
            let id = match entries.iter().find(|(k, _)| k == "id").map(|(_, v)| v) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                _ => self.row.to_string(),
            };
            let mut row: Map<String, Value> = entries.into_iter().collect();
            if let Err((field, message)) = references.join(&id, &mut row) {
                return Err(self.row_error(at, Some(field), message));
            }
            entries = row.into_iter().collect();
        }
        let named = entries.iter().any(|(k, v)| k == "id" && !v.is_null());
        let sample = Sample::from_entries(self.row, entries)
            .map_err(|e| self.row_error(at, Some(e.field), e.message))?;
        let problem = if named {
            self.repeated(&sample.id, at)
                .or_else(|| self.unnamed_row_goes_by(&sample.id))
        } else {
            self.named_after_row(at)
        };
        match problem {
            Some(message) => Err(self.row_error(at, Some("id".to_string()), message)),
            None => Ok((sample, self.location(at))),
        }
    }

    /// Why `id` at `at` repeats an earlier row, or `None` (and `id` noted)
    /// when it is the first row with it.
    fn repeated(&mut self, id: &str, at: Position) -> Option<String> {
        let (row, first) = *self
            .first_with_id
            .entry(id_digest(id))
            .or_insert((self.row, at.number()));
        // Every row read well in one input has the same kind of position.
        (row != self.row).then(|| format!("id '{id}' repeats row {row} ({})", at.renumbered(first)))
    }

    /// Why an explicit `id` cannot be used: an earlier row without an id
    /// already goes by it as its number. `None` when none does.
    fn unnamed_row_goes_by(&self, id: &str) -> Option<String> {
        // Only the canonical spelling is a row's id: "07" is not row 7's.
        let row: u64 = id.parse().ok().filter(|n: &u64| n.to_string() == id)?;
        let i = self.unnamed.partition_point(|&(_, last)| last < row);
        self.unnamed
            .get(i)
            .is_some_and(|&(first, _)| first <= row)
            .then(|| {
                format!("id '{id}' is the number row {row} goes by, as it has no id of its own")
            })
    }

    /// Why this row, which has no id, cannot go by its number: an earlier
    /// row wrote that number as its id. `None` (and the row noted as
    /// unnamed) when none did.
    fn named_after_row(&mut self, at: Position) -> Option<String> {
        let id = self.row.to_string();
        if let Some(&(row, first)) = self.first_with_id.get(&id_digest(&id)) {
            return Some(format!(
                "the row has no id and its number {id} is the id of row {row} ({}): give it an id",
                at.renumbered(first)
            ));
        }
        // The runs, not the map of ids, hold the unnamed rows: that map
        // would grow by every row of an input without ids.
        match self.unnamed.last_mut() {
            Some((_, last)) if *last + 1 == self.row => *last = self.row,
            _ => self.unnamed.push((self.row, self.row)),
        }
        None
    }
}

impl Iterator for Rows {
    type Item = Row;

    fn next(&mut self) -> Option<Row> {
        if let Some(row) = self.peeked.take() {
            return Some(row);
        }
        let row = self.read_row();
        self.finished |= row.is_none();
        row
    }
}

impl Rows {
    /// The next row of the input.
    fn read_row(&mut self) -> Option<Row> {
        let (value, at) = match &mut self.inner {
            Inner::Done => return None,
            Inner::Jsonl {
                lines,
                line,
                buf,
                by_place,
            } => loop {
                buf.clear();
                *line += 1;
                match lines.read_until(b'\n', buf) {
                    Ok(0) => {
                        self.inner = Inner::Done;
                        return None;
                    }
                    Ok(_) if buf.iter().all(u8::is_ascii_whitespace) => continue,
                    Ok(_) => {
                        // Rows given in memory are written one per line.
                        let at = if *by_place {
                            Position::Row(*line)
                        } else {
                            Position::Line(*line)
                        };
                        // from_slice also rejects invalid UTF-8, so such a line is one bad row.
                        let parsed = serde_json::from_slice::<CheckedRow>(buf);
                        self.row += 1;
                        break match parsed {
                            Ok(row) => (row, at),
                            Err(e) => {
                                return Some(Err(self.row_error(
                                    at,
                                    None,
                                    format!("invalid JSON: {e}"),
                                )))
                            }
                        };
                    }
                    Err(e) => {
                        // Rows given in memory are written one per line.
                        let at = if *by_place {
                            Position::Row(*line)
                        } else {
                            Position::Line(*line)
                        };
                        self.row += 1;
                        self.inner = Inner::Done;
                        return Some(Err(self.row_error(at, None, format!("cannot read: {e}"))));
                    }
                }
            },
            Inner::Csv {
                records,
                headers,
                breaks,
            } => {
                let record = records.next()?;
                self.row += 1;
                let headers = headers.clone();
                let mut line_of = |p: Option<&csv::Position>| {
                    Position::Line(p.map_or(0, |p| breaks.line_at(p.byte())))
                };
                return Some(match record {
                    Ok(r) => {
                        let at = line_of(r.position());
                        match csv_object(&headers, &r) {
                            Ok(map) => self.row_from_object(map.into_iter().collect(), at),
                            Err((field, message)) => Err(self.row_error(at, Some(field), message)),
                        }
                    }
                    Err(e) => {
                        let at = line_of(e.position());
                        Err(self.row_error(at, None, format!("invalid CSV: {e}")))
                    }
                });
            }
            Inner::Otlp(traces) => {
                let trace = traces.next()?;
                self.row += 1;
                let at = Position::Trace(self.row);
                return Some(match trace.row {
                    Ok(map) => self.row_from_object(map.into_iter().collect(), at),
                    Err(e) => Err(self.row_error(
                        at,
                        Some(e.field),
                        format!("trace {}: {}", trace.id, e.message),
                    )),
                });
            }
            Inner::JsonArray(rx) => match rx.recv() {
                Err(_) => {
                    self.inner = Inner::Done;
                    return None;
                }
                Ok(ArrayItem::Element(element)) => {
                    self.row += 1;
                    (element, Position::Element(self.row))
                }
                Ok(ArrayItem::Error { message, line }) => {
                    self.row += 1;
                    self.inner = Inner::Done;
                    return Some(Err(self.row_error(Position::Line(line), None, message)));
                }
            },
        };
        Some(self.row_from_checked(value, at))
    }
}

/// What the dataset layer does to the rows before samples are built.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputOptions {
    /// A references file joined onto the rows ([`crate::references`]).
    pub references: Option<PathBuf>,
    /// An OTLP logs export whose GenAI events give the messages of an
    /// OTLP trace export's spans ([`Events`]).
    pub logs: Option<PathBuf>,
    /// Whether an OTLP export's LLM calls without a common parent are
    /// stitched into conversations.
    pub stitch: Stitch,
}

/// What the dataset layer did to the input: `summary.json`'s `input`.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InputReport {
    /// How an OTLP export's calls without a common parent became rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stitched: Option<Stitched>,
    /// What joining `--references` found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub references: Option<ReferencesReport>,
}

impl InputReport {
    /// Whether there is nothing to say.
    pub fn is_empty(&self) -> bool {
        self.stitched.is_none() && self.references.is_none()
    }
}

fn csv_rows(reader: BufReader<Box<dyn Read + Send>>, file: &str) -> Result<Inner, DatasetError> {
    let breaks = Breaks::default();
    let reader = LineBreaks {
        inner: reader,
        offset: 0,
        pending: Arc::clone(&breaks.pending),
    };
    let mut csv = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(reader);
    let headers = csv
        .headers()
        .map_err(|e| DatasetError::Malformed {
            file: file.to_string(),
            message: format!("cannot read the CSV header: {e}"),
        })?
        .iter()
        .map(str::to_string)
        .collect::<Vec<String>>();
    if let Some((i, name)) = headers
        .iter()
        .enumerate()
        .find(|(i, h)| headers[..*i].contains(h))
    {
        let first = headers.iter().position(|h| h == name).unwrap_or(0);
        return Err(DatasetError::Malformed {
            file: file.to_string(),
            message: format!(
                "the CSV header names column '{name}' twice (columns {} and {}): which one a row means is unclear",
                first + 1,
                i + 1
            ),
        });
    }
    Ok(Inner::Csv {
        records: csv.into_records(),
        headers,
        breaks,
    })
}

/// The line breaks a CSV reader has read and no record has passed yet:
/// the csv crate counts no blank line that it skips between records, so
/// its line numbers fall behind after one. Offsets and bytes (`\r` or
/// `\n`), in input order; only the read-ahead is held, so memory stays
/// flat.
#[derive(Default)]
struct Breaks {
    pending: Arc<Mutex<VecDeque<(u64, u8)>>>,
    /// `\n`s before the last offset asked for.
    passed: u64,
}

impl Breaks {
    /// The 1-based line of a record whose reading started at byte `start`:
    /// after the line breaks before it, and after the blank lines it
    /// opens with.
    fn line_at(&mut self, start: u64) -> u64 {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let mut next = start;
        while let Some(&(offset, byte)) = pending.front() {
            if offset > next {
                break;
            }
            if offset == next {
                next += 1;
            }
            if byte == b'\n' {
                self.passed += 1;
            }
            pending.pop_front();
        }
        self.passed + 1
    }
}

/// A reader that notes the offsets of the line breaks it passes on (into
/// [`Breaks::pending`]).
struct LineBreaks {
    inner: BufReader<Box<dyn Read + Send>>,
    offset: u64,
    pending: Arc<Mutex<VecDeque<(u64, u8)>>>,
}

impl Read for LineBreaks {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        for (i, &b) in buf[..n].iter().enumerate() {
            if b == b'\n' || b == b'\r' {
                pending.push_back((self.offset + i as u64, b));
            }
        }
        self.offset += n as u64;
        Ok(n)
    }
}

/// Parses a JSON array on its own thread, element by element, through a
/// channel of bounded depth.
fn json_array_rows(reader: BufReader<Box<dyn Read + Send>>, file: String) -> Inner {
    let (tx, rx) = mpsc::sync_channel(256);
    std::thread::Builder::new()
        .name(format!("read {file}"))
        .spawn(move || stream_array(reader, tx))
        .map_or(Inner::Done, |_| Inner::JsonArray(rx))
}

fn stream_array(reader: BufReader<Box<dyn Read + Send>>, tx: mpsc::SyncSender<ArrayItem>) {
    use serde::de::{Deserializer, SeqAccess, Visitor};
    let mut de = serde_json::Deserializer::from_reader(reader);

    struct Elements<'a> {
        tx: &'a mpsc::SyncSender<ArrayItem>,
    }
    impl<'de> Visitor<'de> for Elements<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON array of objects")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while let Some(value) = seq.next_element::<CheckedRow>()? {
                // The receiver hung up: nobody wants more rows.
                if self.tx.send(ArrayItem::Element(value)).is_err() {
                    return Ok(());
                }
            }
            Ok(())
        }
    }
    let result = de
        .deserialize_seq(Elements { tx: &tx })
        .and_then(|()| de.end());
    if let Err(e) = result {
        let _ = tx.send(ArrayItem::Error {
            line: e.line() as u64,
            message: format!("invalid JSON array: {e}"),
        });
    }
}

/// The first 128 bits of the id's SHA-256. By the birthday bound, some two
/// of n distinct ids share one with odds of about n^2 / 2^129 (for a billion
/// ids, under 10^-20); only then would a row be called a repeat wrongly.
fn id_digest(id: &str) -> u128 {
    let mut first = [0u8; 16];
    first.copy_from_slice(&Sha256::digest(id.as_bytes())[..16]);
    u128::from_le_bytes(first)
}

/// Hashes an [`id_digest`] by its low 64 bits: a SHA-256 digest is as
/// well spread as any hash of it, and SipHash on each row's id showed in
/// the profile of a whole run.
#[derive(Default)]
struct DigestBits(u64);

impl Hasher for DigestBits {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u128(&mut self, digest: u128) {
        self.0 = digest as u64;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Counts the bytes that pass through, shared with [`Rows::bytes_read`].
struct Counting {
    inner: Box<dyn Read + Send>,
    bytes: Arc<AtomicU64>,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}
