//! A test set's generation, every step but the judge's calls: the
//! documents chunked, near-duplicate chunks dropped, chunks too small to
//! ask about, mostly markup or of a reference list set aside, the links and the plan made ([`prepare`]); for each
//! planned question the request to send ([`Prepared::request`]); and for
//! each answer, the checks and, when they pass, the test-set row
//! ([`Prepared::accept`]). The caller (`assay-engine`'s `generate`) sends
//! the requests; everything it decides comes from here.
//!
//! A row is a sample `assay eval` reads: `user_input`, `reference`,
//! `reference_contexts`, and beside them what made it:
//! `reference_context_spans` (each context's document and character span
//! in that document's text), `reference_evidence` (the sentence of each
//! context that states the answer, where its prompt asks the judge to
//! cite one: [`crate::evidence`]), `question_type`, `persona`, `style`,
//! `length`, and `meta` (document, language, the generator's signature).

use crate::check::{self, Candidate, Readings, Rejection, Similarity};
use crate::chunk::{
    chunk, citations, is_apparatus, markup_share, Chunk, CITATIONS_FROM, MARKUP_FROM,
};
use crate::dedup::{self, shingles};
use crate::document::Document;
use crate::evolve::Evolution;
use crate::links::{partners, terms, Partner};
use crate::plan::{plan, PlanChunk, Shortfall, Slot};
use crate::quota::{quotas, Mix, QuestionType};
use crate::request::{self, render, Context, Draw, Earlier, Request, Voice, RETRY_TEMPERATURE};
use assay_core::aggregate::SplitMix64;
use assay_grounding::language;
use assay_grounding::words::Lexicon;
use assay_grounding::Verifier;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::Arc;

/// How a test set is made.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Questions to make.
    pub size: usize,
    pub mix: Mix,
    pub seed: u64,
    /// The largest chunk, in estimated tokens.
    pub chunk_tokens: usize,
    /// Chunks of fewer estimated tokens are not asked about (a heading's
    /// lone line holds no question).
    pub min_chunk_tokens: usize,
    /// Requests per question before it counts as not made.
    pub attempts: usize,
    /// Who asks; [`request::PERSONAS`] when empty.
    pub personas: Vec<String>,
    /// The evolutions each question draws one of; none when empty.
    pub evolutions: Vec<Evolution>,
    /// Stop after this many judge answers, with what was made kept.
    pub max_calls: Option<usize>,
    /// Stop once the calls made cost this much (at the judge's price).
    pub max_cost: Option<f64>,
    /// The critic's least score of a kept question, when the judge is
    /// asked to criticise each ([`crate::critic`]).
    pub critic: Option<f64>,
    /// Whether each candidate's question is asked of the judge alone,
    /// without its contexts ([`crate::closed_book`]).
    pub closed_book: bool,
    /// Whether each specific question is asked of the judge again with its
    /// contexts, and kept only where its answer agrees with the reference
    /// ([`crate::round_trip`]).
    pub round_trip: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            size: 20,
            mix: Mix::default(),
            seed: 0,
            chunk_tokens: 256,
            min_chunk_tokens: 30,
            attempts: 3,
            personas: Vec::new(),
            evolutions: Vec::new(),
            max_calls: None,
            max_cost: None,
            critic: None,
            closed_book: false,
            round_trip: false,
        }
    }
}

/// The version of the generator's steps, in its signature.
pub const VERSION: u32 = 17;

/// Chunks of its document a question is asked about at most, each for
/// [`Options::attempts`] attempts, before it moves to another document: a
/// small local judge that cannot make a question from one chunk often can
/// from another (see [`Prepared::fallback`]). Five, not three: with three,
/// the 0.5B default made none of the Pierre Curie page's multi-hop and
/// abstract questions in `examples/docs` (nor in the other document they
/// moved to); with five it made them from the page's own chunks, and
/// the set whole.
pub const CHUNKS_PER_QUESTION: usize = 5;

/// Documents a question is asked about at most: its own, then one other
/// ([`Prepared::elsewhere`]), each on up to [`CHUNKS_PER_QUESTION`]
/// chunks, before it counts as not made. A document the judge cannot
/// make a question of (a small local judge and a French document, say)
/// so costs the set no question, and each document stays within one
/// question of its quota.
pub const DOCUMENTS_PER_QUESTION: usize = 2;

/// One chunk the plan may ask about.
#[derive(Clone, Debug)]
pub struct Piece {
    pub document: usize,
    pub chunk: Chunk,
    pub partner: Option<Partner>,
}

/// The documents prepared and the plan made.
#[derive(Debug)]
pub struct Prepared<'a> {
    pub documents: &'a [Document],
    /// Each document's language (English name), where the detector is
    /// sure of it.
    pub languages: Vec<Option<String>>,
    /// Each document's lexicon, for the checks that read its words.
    lexicons: Vec<Lexicon>,
    /// Who asks: the options' personas, or the built-in ones.
    personas: Vec<String>,
    pub pieces: Vec<Piece>,
    pub slots: Vec<Result<Slot, Shortfall>>,
    /// Chunks dropped as near duplicates of an earlier one, as too
    /// small, as mostly markup (a raw HTML table in Markdown), and as
    /// the document's apparatus (under a heading such as "References", or
    /// holding [`CITATIONS_FROM`] citations or more).
    pub duplicate_chunks: usize,
    pub small_chunks: usize,
    pub markup_chunks: usize,
    pub apparatus_chunks: usize,
    pub options: Options,
    /// The questions kept so far, for the duplicate check.
    kept: Vec<Kept>,
    /// The judge and the embedder asked, as the signature names them
    /// (set by whoever asks them; empty until then).
    pub judge: String,
    pub embedder: Option<String>,
    /// The grounding model that reads whether an answer is supported (and
    /// answered without its contexts), in place of the lexical verdict.
    pub grounding: Option<Arc<dyn Verifier>>,
}

/// A candidate that passed the checks needing no call, not kept yet.
#[derive(Debug)]
pub struct Checked {
    kept: Kept,
    candidate: Candidate,
    lexicon: Lexicon,
    grounding: Option<Arc<dyn Verifier>>,
    row: Value,
}

impl Checked {
    /// Its question.
    pub fn question(&self) -> &str {
        &self.kept.question
    }

    /// What `verdict` (a further check's: [`crate::closed_book::verdict`],
    /// [`crate::round_trip::verdict`]) makes of the judge's `answer` about
    /// this candidate, read with its document's lexicon and the grounding
    /// model where there is one.
    pub fn read(&self, verdict: check::FurtherVerdict, answer: &Value) -> Result<(), Rejection> {
        verdict(
            &self.candidate,
            answer,
            self.lexicon,
            self.grounding.as_deref(),
        )
    }
}

/// A question kept, as later ones are compared with it.
#[derive(Debug)]
struct Kept {
    question: String,
    shingles: HashSet<String>,
    embedding: Option<Vec<f32>>,
    answer: HashSet<String>,
}

impl Kept {
    /// How alike `other` is to this question when a measure says they
    /// are the same question: their words first, then their meaning where
    /// both have an embedding, then their answers.
    fn alike(&self, other: &Kept) -> Option<(f64, Similarity)> {
        let by_words = (
            dedup::jaccard(&self.shingles, &other.shingles),
            Similarity::Jaccard,
        );
        let by_meaning = match (&self.embedding, &other.embedding) {
            (Some(a), Some(b)) => Some((dedup::cosine(a, b), Similarity::Cosine)),
            _ => None,
        };
        [
            Some(by_words).filter(|(j, _)| *j >= dedup::DUPLICATE_FROM),
            by_meaning.filter(|(c, _)| *c >= dedup::SAME_MEANING_FROM),
            dedup::same_answer(&self.answer, &other.answer).map(|j| (j, Similarity::AnswerJaccard)),
            dedup::answer_within(&self.answer, &other.answer)
                .then_some((1.0, Similarity::AnswerWithin)),
        ]
        .into_iter()
        .flatten()
        .next()
    }
}

/// Chunks, links and the plan of `documents` (in the order given; the
/// quotas spread over those that have a chunk to ask about, and over the
/// others as shortfalls).
pub fn prepare<'a>(documents: &'a [Document], options: &Options) -> Prepared<'a> {
    let languages: Vec<Option<String>> = documents
        .iter()
        .map(|d| language::detected(&[&d.text]))
        .collect();
    let mut all: Vec<(usize, Chunk)> = Vec::new();
    for (i, d) in documents.iter().enumerate() {
        all.extend(chunk(d, options.chunk_tokens).into_iter().map(|c| (i, c)));
    }
    let texts: Vec<&str> = all
        .iter()
        .map(|(d, c)| &documents[*d].text[c.span.clone()])
        .collect();
    let duplicates = dedup::distinct(&texts, dedup::DUPLICATE_FROM);
    let before = all.len();
    let mut kept: Vec<(usize, Chunk)> = all
        .into_iter()
        .zip(&duplicates)
        .filter(|(_, d)| d.is_none())
        .map(|(c, _)| c)
        .collect();
    let duplicate_chunks = before - kept.len();
    let small_chunks = set_aside(&mut kept, |(_, c)| c.tokens < options.min_chunk_tokens);
    let markup_chunks = set_aside(&mut kept, |(d, c)| {
        markup_share(&documents[*d].text[c.span.clone()]) >= MARKUP_FROM
    });
    let apparatus_chunks = set_aside(&mut kept, |(d, c)| {
        c.headings.iter().any(|h| is_apparatus(h))
            || citations(&documents[*d].text[c.span.clone()]) >= CITATIONS_FROM
    });
    let lexicons: Vec<Lexicon> = documents
        .iter()
        .map(|d| language::lexicon_of(&[&d.text]).unwrap_or(Lexicon::ENGLISH))
        .collect();
    let term_sets: Vec<_> = kept
        .iter()
        .map(|(d, c)| {
            (
                *d,
                terms(&documents[*d].text[c.span.clone()], &lexicons[*d]),
            )
        })
        .collect();
    let links = partners(&term_sets);
    let pieces: Vec<Piece> = kept
        .into_iter()
        .zip(links)
        .map(|((document, chunk), partner)| Piece {
            document,
            chunk,
            partner,
        })
        .collect();
    let plan_chunks: Vec<PlanChunk> = pieces
        .iter()
        .map(|p| PlanChunk {
            document: p.document,
            partner: p.partner.as_ref().map(|l| l.chunk),
        })
        .collect();
    let per_document = quotas(options.size, &options.mix, documents.len());
    let personas = if options.personas.is_empty() {
        request::PERSONAS.iter().map(|p| p.to_string()).collect()
    } else {
        options.personas.clone()
    };
    Prepared {
        documents,
        languages,
        lexicons,
        slots: plan(
            &plan_chunks,
            &per_document,
            personas.len(),
            options.evolutions.len(),
            options.seed,
        ),
        pieces,
        duplicate_chunks,
        small_chunks,
        markup_chunks,
        apparatus_chunks,
        options: options.clone(),
        personas,
        kept: Vec::new(),
        judge: String::new(),
        embedder: None,
        grounding: None,
    }
}

/// Removes the chunks that are `no_source`, and counts them.
fn set_aside(
    chunks: &mut Vec<(usize, Chunk)>,
    no_source: impl Fn(&(usize, Chunk)) -> bool,
) -> usize {
    let before = chunks.len();
    chunks.retain(|c| !no_source(c));
    before - chunks.len()
}

/// A piece's text, a span of its document.
fn piece_text<'d>(documents: &'d [Document], piece: &Piece) -> &'d str {
    &documents[piece.document].text[piece.chunk.span.clone()]
}

impl Prepared<'_> {
    /// The pieces a slot asks about: its chunk, and its partner's.
    fn asked(&self, slot: &Slot) -> Vec<usize> {
        std::iter::once(slot.chunk).chain(slot.partner).collect()
    }

    /// `slot` moved to the `n`th chunk after its own among its
    /// document's chunks that its type can ask about (in the documents'
    /// order, from the start again after the last), for a question no
    /// candidate of which was kept from its own chunk; `None` where the
    /// document has no `n`th other chunk, or `n` reaches
    /// [`CHUNKS_PER_QUESTION`].
    pub fn fallback(&self, slot: &Slot, n: usize) -> Option<Slot> {
        let pool = self.askable(slot.document, slot);
        if n == 0 || n >= CHUNKS_PER_QUESTION || n >= pool.len() {
            return None;
        }
        let at = pool.iter().position(|&i| i == slot.chunk)?;
        Some(self.moved(slot, pool[(at + n) % pool.len()]))
    }

    /// `slot` moved to another document, for a question no candidate of
    /// which was kept from any of its own document's chunks: the first
    /// document after its own (in order, from the start again after the
    /// last) that is not among `full` (those already given a question
    /// beyond their quota, so that each stays within one of it) and has a
    /// chunk its type can ask about; asked about that document's first
    /// such chunk that no planned question asks about, else its first.
    /// `None` where no document qualifies.
    pub fn elsewhere(&self, slot: &Slot, full: &[usize]) -> Option<Slot> {
        let planned: Vec<usize> = self.slots.iter().flatten().map(|s| s.chunk).collect();
        let n = self.documents.len();
        (1..n)
            .map(|k| (slot.document + k) % n)
            .filter(|d| !full.contains(d))
            .find_map(|document| {
                let pool = self.askable(document, slot);
                let chunk = *pool
                    .iter()
                    .find(|i| !planned.contains(i))
                    .or(pool.first())?;
                Some(self.moved(slot, chunk))
            })
    }

    /// The pieces of `document` that `slot`'s type can ask about (one
    /// with a partner, for a type that links two), in order.
    fn askable(&self, document: usize, slot: &Slot) -> Vec<usize> {
        (0..self.pieces.len())
            .filter(|&i| self.pieces[i].document == document)
            .filter(|&i| !slot.kind.linked() || self.pieces[i].partner.is_some())
            .collect()
    }

    /// `slot` asked about the piece `chunk` (and its partner, for a type
    /// that links two) instead, in that piece's document.
    fn moved(&self, slot: &Slot, chunk: usize) -> Slot {
        Slot {
            document: self.pieces[chunk].document,
            chunk,
            partner: match slot.kind.linked() {
                true => self.pieces[chunk].partner.as_ref().map(|p| p.chunk),
                false => None,
            },
            ..slot.clone()
        }
    }

    /// The chunks `slot` asks about, as its request shows them.
    fn contexts(&self, slot: &Slot) -> Vec<Context<'_>> {
        self.asked(slot)
            .into_iter()
            .map(|i| Context {
                headings: self.pieces[i].chunk.headings.clone(),
                text: piece_text(self.documents, &self.pieces[i]),
            })
            .collect()
    }

    /// The round-trip request for `question`, made for `slot`, where the
    /// options ask for one and its type is checked
    /// ([`crate::round_trip`]).
    pub fn round_trip_request(&self, slot: &Slot, question: &str) -> Option<Request> {
        (self.options.round_trip && crate::round_trip::checks(slot.kind))
            .then(|| crate::round_trip::request(&self.contexts(slot), question))
    }

    /// The request for `slot`, attempt `attempt` (from 0), told of the
    /// `earlier` attempt's rejected candidate where there is one.
    pub fn request(&self, slot: &Slot, attempt: usize, earlier: Option<Earlier<'_>>) -> Request {
        let contexts = self.contexts(slot);
        let shared = match slot.partner {
            Some(_) => self.pieces[slot.chunk]
                .partner
                .as_ref()
                .map_or_else(Vec::new, |p| p.shared.clone()),
            None => Vec::new(),
        };
        let language = self.languages[slot.document]
            .as_deref()
            .unwrap_or("the language of the context");
        let voice = Voice {
            persona: &self.personas[slot.persona],
            language,
            evolution: slot.evolution.map(|e| self.options.evolutions[e]),
        };
        let mut request = render(slot, &contexts, &shared, voice, attempt, earlier);
        if attempt > 0 {
            // Seeded by the plan's seed, the question and the attempt: a
            // second run draws the same answers (and finds them cached).
            let mut mix = SplitMix64(
                self.options.seed ^ ((slot.chunk as u64) << 20) ^ ((slot.document as u64) << 40),
            );
            request.draw = Some(Draw {
                temperature: RETRY_TEMPERATURE,
                seed: (0..attempt).map(|_| mix.next_u64()).last().unwrap_or(0),
            });
        }
        request
    }

    /// The row for the judge's `answer` to `slot`'s request, or why it is
    /// not kept; a kept question joins those later ones are compared with,
    /// by their words and, where given, by `embedding`, its question's
    /// unit vector.
    pub fn accept(
        &mut self,
        slot: &Slot,
        answer: &Value,
        embedding: Option<Vec<f32>>,
    ) -> Result<Value, Rejection> {
        let checked = self.check(slot, answer, embedding, None)?;
        Ok(self.keep(checked))
    }

    /// The checks of [`Prepared::accept`] that need no call, without
    /// keeping the candidate: what passes them goes to the critic, where
    /// there is one, before [`Prepared::keep`]. `earlier` is what the
    /// request that was answered told of an earlier attempt, whose advice
    /// the candidate must not copy as it must not copy the prompt.
    pub fn check(
        &self,
        slot: &Slot,
        answer: &Value,
        embedding: Option<Vec<f32>>,
        earlier: Option<Earlier<'_>>,
    ) -> Result<Checked, Rejection> {
        let candidate = Candidate::from_json(answer)?;
        let scenario = match slot.kind {
            QuestionType::Conversation => Some(check::text_field(answer, "scenario")?),
            _ => None,
        };
        let asked = self.asked(slot);
        let documents = self.documents;
        let contexts: Vec<&str> = asked
            .iter()
            .map(|&i| piece_text(documents, &self.pieces[i]))
            .collect();
        let document = &documents[slot.document];
        let lexicon = self.lexicons[slot.document];
        // The 1.5B judge ended a reference answer with the advice its retry
        // was given ("... write it whole, with any quotation marks it
        // copies escaped").
        let written = [Some(candidate.question.as_str()), scenario.as_deref()]
            .into_iter()
            .flatten()
            .chain([candidate.answer.as_str()])
            .collect::<Vec<_>>();
        let mut shown = crate::request::prompt(slot.kind).shown();
        if let Some(e) = earlier {
            shown.push('\n');
            shown.push_str(&e.why.advice_words());
        }
        check::copies_prompt(&written, &shown, &contexts)?;
        check::finished(&candidate, lexicon)?;
        check::cut_at_quote(&candidate, &contexts)?;
        check::self_contained(&candidate, lexicon)?;
        check::answer_type(&candidate)?;
        if scenario.is_none() {
            check::asks_something(&candidate, slot.style)?;
            check::on_topic(&candidate, lexicon)?;
        }
        check::contrasts(&candidate)?;
        // Where the prompt asks the judge to cite a sentence of each
        // context, the answer must be supported by one sentence of each
        // (after its context's headings, which name what a sentence's
        // pronouns stand for), the cited ones first, not by words taken
        // from all over the contexts.
        let schema = &crate::request::prompt(slot.kind).output_schema;
        let evidence = match crate::evidence::cited(schema, answer, &contexts)? {
            Some(cited) => {
                Some(self.one_sentence_each(&candidate, &asked, &contexts, &cited, lexicon)?)
            }
            None => {
                check::supported(&candidate, &contexts, lexicon, self.grounding.as_deref())?;
                None
            }
        };
        check::given_away(&candidate, lexicon)?;
        let expected = self.languages[slot.document].as_deref();
        check::in_language(&candidate, expected)?;
        let mine = Kept {
            question: candidate.question.clone(),
            shingles: shingles(&candidate.question),
            embedding,
            answer: shingles(&candidate.answer),
        };
        let duplicate = self
            .kept
            .iter()
            .filter_map(|k| k.alike(&mine).map(|(s, m)| (k, s, m)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((of, similarity, measure)) = duplicate {
            return Err(Rejection::Duplicate {
                of: of.question.clone(),
                similarity,
                measure,
            });
        }
        let spans: Vec<Value> = asked
            .iter()
            .map(|&i| {
                let p = &self.pieces[i];
                let text = &self.documents[p.document].text;
                json!({
                    "document": self.documents[p.document].name,
                    "start": text[..p.chunk.span.start].chars().count(),
                    "end": text[..p.chunk.span.end].chars().count(),
                })
            })
            .collect();
        let mut row = json!({
            "user_input": candidate.question.clone(),
            "reference": candidate.answer.clone(),
            "reference_contexts": contexts,
            "reference_context_spans": spans,
            "question_type": slot.kind.name(),
            "persona": self.personas[slot.persona],
            "style": slot.style.name(),
            "length": slot.length.name(),
            "evolution": slot.evolution.map(|e| self.options.evolutions[e].name()),
            "meta": {
                "document": document.name,
                "language": self.languages[slot.document],
                "generator": self.signature(),
            },
        });
        if let (Some(evidence), Value::Object(fields)) = (evidence, &mut row) {
            fields.insert("reference_evidence".into(), json!(evidence));
        }
        if let (Some(scenario), Value::Object(fields)) = (scenario, &mut row) {
            // DeepEval's conversational golden: the scenario, who the user
            // is and the expected outcome; `reference` keeps the outcome
            // for ragas' goal accuracy.
            fields.insert("scenario".into(), json!(scenario));
            fields.insert(
                "user_description".into(),
                json!(self.personas[slot.persona]),
            );
            let outcome = fields["reference"].clone();
            fields.insert("expected_outcome".into(), outcome);
        }
        Ok(Checked {
            kept: mine,
            candidate,
            lexicon,
            grounding: self.grounding.clone(),
            row,
        })
    }

    /// The first choice of one sentence of each of the `asked` chunks
    /// (the cited ones first, [`crate::evidence::Cited::choices`]) that
    /// supports `candidate`'s answer, or why the cited ones do not.
    fn one_sentence_each(
        &self,
        candidate: &Candidate,
        asked: &[usize],
        contexts: &[&str],
        cited: &crate::evidence::Cited,
        lexicon: Lexicon,
    ) -> Result<Vec<String>, Rejection> {
        let above = |i: usize, text: &str| {
            let mut lines = self.pieces[i].chunk.headings.clone();
            lines.push(text.to_string());
            lines.join("\n")
        };
        let wholes: Vec<String> = asked
            .iter()
            .zip(contexts)
            .map(|(&i, c)| above(i, c))
            .collect();
        let wholes: Vec<&str> = wholes.iter().map(String::as_str).collect();
        let texts = asked
            .iter()
            .zip(&cited.sentences)
            .map(|(&i, sentences)| sentences.iter().map(|s| above(i, s)).collect())
            .collect();
        let readings = Readings::new(
            candidate,
            &wholes,
            texts,
            lexicon,
            self.grounding.as_deref(),
        );
        // The cited choice's reason is the one told: the others are
        // tried only for a sentence the judge cited wrongly.
        let why = match readings.check(&cited.chosen) {
            Ok(()) => return Ok(cited.texts(&cited.chosen)),
            Err(e) => e,
        };
        if let Rejection::Grounding { .. } = why {
            return Err(why);
        }
        for choice in cited.choices().skip(1) {
            match readings.check(&choice) {
                Ok(()) => return Ok(cited.texts(&choice)),
                Err(e @ Rejection::Grounding { .. }) => return Err(e),
                Err(_) => {}
            }
        }
        Err(why)
    }

    /// Keeps a checked candidate: its row, numbered, and its question
    /// among those later ones are compared with.
    pub fn keep(&mut self, checked: Checked) -> Value {
        self.kept.push(checked.kept);
        let mut row = json!({"id": format!("q{}", self.kept.len())});
        if let (Value::Object(first), Value::Object(rest)) = (&mut row, checked.row) {
            first.extend(rest);
        }
        row
    }

    /// What made the test set: the steps' version, the prompts' versions,
    /// the settings, the judge and the embedder of the duplicate check.
    pub fn signature(&self) -> String {
        let o = &self.options;
        let prompts: Vec<String> = QuestionType::ALL
            .iter()
            .map(|t| format!("{}@v{}", t.name(), request::prompt(*t).version))
            .collect();
        let mut signature = format!(
            "assay-generate/v{VERSION} prompts={} mix={} seed={} chunk_tokens={} min_chunk_tokens={} judge={}",
            prompts.join(","),
            o.mix,
            o.seed,
            o.chunk_tokens,
            o.min_chunk_tokens,
            self.judge
        );
        if let Some(model) = &self.grounding {
            signature.push_str(&format!(" grounding={}", model.identity()));
        }
        if let Some(embedder) = &self.embedder {
            signature.push_str(&format!(
                " embedder={embedder} same_meaning_from={}",
                dedup::SAME_MEANING_FROM
            ));
        }
        if let Some(min) = o.critic {
            signature.push_str(&format!(
                " critic@v{}>={min}",
                crate::critic::prompt().version
            ));
        }
        if o.closed_book {
            signature.push_str(&format!(
                " closed_book@v{}",
                crate::closed_book::prompt().version
            ));
        }
        if o.round_trip {
            signature.push_str(&format!(
                " round_trip@v{}>={}",
                crate::round_trip::prompt().version,
                crate::round_trip::AGREE_FROM
            ));
        }
        if !o.evolutions.is_empty() {
            let names: Vec<&str> = o.evolutions.iter().map(|e| e.name()).collect();
            signature.push_str(&format!(
                " evolutions@v{}={}",
                Evolution::version(),
                names.join(",")
            ));
        }
        signature
    }

    /// The judge calls a candidate of `slot` takes when it passes every
    /// check: its question's, and one more for each of the critic, the
    /// closed-book and the round-trip checks that the options ask for.
    pub fn calls_per_candidate(&self, slot: &Slot) -> usize {
        let o = &self.options;
        1 + usize::from(o.critic.is_some())
            + usize::from(o.closed_book)
            + usize::from(o.round_trip && crate::round_trip::checks(slot.kind))
    }

    /// The estimated tokens of every planned request's messages (the
    /// first attempts, and the critic's, the closed-book and the
    /// round-trip prompts for each where they are asked, less the question
    /// they are shown), for a dry run.
    pub fn estimated_tokens(&self) -> usize {
        let tokens = |r: Request| {
            crate::chunk::estimate_tokens(&r.system) + crate::chunk::estimate_tokens(&r.user)
        };
        let critic = match self.options.critic {
            Some(_) => tokens(crate::critic::request("")),
            None => 0,
        } + match self.options.closed_book {
            true => tokens(crate::closed_book::request("")),
            false => 0,
        };
        self.slots
            .iter()
            .flatten()
            .map(|s| {
                let round_trip = self.round_trip_request(s, "").map_or(0, tokens);
                tokens(self.request(s, 0, None)) + critic + round_trip
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs() -> Vec<Document> {
        let radium = "# Radium\n\nRadium is a chemical element with the symbol Ra and atomic number 88. \
                      It was discovered by Marie and Pierre Curie in 1898 in the mineral pitchblende.\n\n\
                      ## Uses\n\nRadium was once used in luminous paint for clocks and aircraft switches, \
                      until the danger of its radiation to the painters became known in the 1920s.";
        let curie = "# Pierre Curie\n\nPierre Curie was a French physicist, born in Paris in 1859. \
                     With Marie Curie he discovered radium and polonium in the mineral pitchblende in 1898.";
        vec![
            Document::markdown("radium.md", radium),
            Document::markdown("curie.md", curie),
        ]
    }

    /// The two sentences of [`docs`]' Curie chunk, as a judge cites them.
    const BORN: &str = "Pierre Curie was a French physicist, born in Paris in 1859.";
    const FOUND: &str =
        "With Marie Curie he discovered radium and polonium in the mineral pitchblende in 1898.";

    fn options(size: usize) -> Options {
        Options {
            size,
            min_chunk_tokens: 10,
            ..Options::default()
        }
    }

    #[test]
    fn the_plan_spreads_the_questions_and_links_the_documents() {
        let d = docs();
        let p = prepare(&d, &options(4));
        assert_eq!(p.pieces.len(), 3);
        assert_eq!(p.slots.len(), 4);
        // The radium discovery chunk and Curie's share curie, discov,
        // pitchblend, radium, 1898...: they are each other's partner.
        let linked: Vec<(usize, usize)> = p
            .pieces
            .iter()
            .enumerate()
            .filter_map(|(i, x)| x.partner.as_ref().map(|l| (i, l.chunk)))
            .collect();
        assert!(
            linked.contains(&(0, 2)) && linked.contains(&(2, 0)),
            "{linked:?}"
        );
        assert_eq!(
            p.languages,
            [Some("English".into()), Some("English".into())]
        );
        assert!(p.estimated_tokens() > 0);
    }

    #[test]
    fn a_chunk_of_raw_html_is_set_aside_and_counted() {
        let mut d = docs();
        let table =
            "# Versions\n\n<table class=\"wikitable\"><tr><td data-sort-value=\"1.2\">1.2</td>\
                     <td data-sort-value=\"13.4.1995\">13. Apr. 1995</td></tr></table>";
        d.push(Document::markdown("python.md", table));
        let p = prepare(&d, &options(4));
        assert_eq!((p.markup_chunks, p.small_chunks), (1, 0));
        assert_eq!(p.pieces.len(), 3);
        assert!(p.pieces.iter().all(|x| x.document < 2));
    }

    #[test]
    fn a_reference_list_is_set_aside_and_counted() {
        let mut d = docs();
        let notes = "# Polonium\n\nPolonium was named after Poland, the homeland of Marie Curie, \
                     who found it with Pierre Curie in July 1898.\n\n## References[edit]\n\n\
                     1. Curie P, Curie M: Sur une substance nouvelle radio-active. \
                     Comptes Rendus 1898, 127:175-8.";
        d.push(Document::markdown("polonium.md", notes));
        let p = prepare(&d, &options(4));
        assert_eq!(p.apparatus_chunks, 1);
        let polonium: Vec<&str> = p
            .pieces
            .iter()
            .filter(|x| x.document == 2)
            .map(|x| piece_text(&d, x))
            .collect();
        assert_eq!(polonium.len(), 1);
        assert!(polonium[0].starts_with("Polonium was named"));
    }

    /// The shared corpus's two papers, read from their PDFs: their
    /// reference lists have no heading in the text, and are set aside by
    /// their citations; the papers' own text, which cites a source or
    /// two at a time, stays.
    #[test]
    fn a_pdf_s_reference_list_is_set_aside_by_its_citations() {
        let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
        let papers = [
            "en_datta2010_dvt_prophylaxis_trauma_review.pdf",
            "en_tully2010_heart_failure_programmes.pdf",
        ]
        .map(|f| shared.join("data/docs").join(f));
        let (d, _) = crate::document::read_paths(&papers)
            .unwrap_or_else(|e| panic!("{e} (is ../shared beside the repository?)"));
        let p = prepare(&d, &options(4));
        let texts: Vec<String> = p
            .pieces
            .iter()
            .map(|x| {
                piece_text(&d, x)
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert!(p.apparatus_chunks >= 4, "{}", p.apparatus_chunks);
        assert!(texts.iter().all(|t| citations(t) < CITATIONS_FROM));
        for entry in ["Br J Haematol 2002", "Lindhoff-Last E"] {
            assert!(!texts.iter().any(|t| t.contains(entry)), "{entry}");
        }
        for prose in [
            "Search terms included",
            "The risk of insertion related complications",
            "Findings indicate that the programmes had met the needs of patients",
        ] {
            assert!(texts.iter().any(|t| t.contains(prose)), "{prose}");
        }
    }

    /// The plan of four questions over [`docs`], and its single-hop slot
    /// about Pierre Curie.
    fn curie_single_hop(d: &[Document]) -> (Prepared<'_>, Slot) {
        let p = prepare(d, &options(4));
        let slot = p
            .slots
            .iter()
            .flatten()
            .find(|s| s.kind == QuestionType::SingleHop && s.document == 1)
            .unwrap()
            .clone();
        (p, slot)
    }

    /// A supported answer becomes a row `assay eval` reads, with its spans
    /// in characters and the sentence that states it; the same question
    /// again is a duplicate; an answer no one sentence holds is
    /// unsupported, though its context holds its words; a cited sentence
    /// that is not the context's is the judge's failure.
    #[test]
    fn answers_are_checked_and_kept_as_rows() {
        let d = docs();
        let (mut p, slot) = curie_single_hop(&d);
        let good = json!({"evidence": BORN, "question": "Where was Pierre Curie born?", "answer": "Pierre Curie was born in Paris in 1859."});
        let row = p.accept(&slot, &good, None).unwrap();
        assert_eq!(row["user_input"], "Where was Pierre Curie born?");
        let span = &row["reference_context_spans"][0];
        let (s, e) = (
            span["start"].as_u64().unwrap() as usize,
            span["end"].as_u64().unwrap() as usize,
        );
        let chars: String = d[1].text.chars().skip(s).take(e - s).collect();
        assert_eq!(row["reference_contexts"][0], chars);
        assert_eq!(span["document"], "curie.md");
        assert!(row["meta"]["generator"]
            .as_str()
            .unwrap()
            .contains("single_hop@v2"));
        assert!(matches!(
            p.accept(&slot, &good, None),
            Err(Rejection::Duplicate { .. })
        ));
        assert_eq!(row["reference_evidence"], json!([BORN]));
        // Every word of this answer is in the chunk, but no one sentence
        // of it states the answer; one that another sentence than the one
        // cited states is kept, citing that one.
        let joined = json!({"evidence": BORN, "question": "What did Pierre Curie discover in Paris in 1859?",
            "answer": "He discovered radium and polonium in Paris in 1859."});
        assert!(matches!(
            p.accept(&slot, &joined, None),
            Err(Rejection::Unsupported { .. })
        ));
        let miscited = json!({"evidence": BORN, "question": "What did Pierre Curie discover in 1898?",
            "answer": "He discovered radium and polonium in 1898."});
        let row = p.accept(&slot, &miscited, None).unwrap();
        assert_eq!(row["reference_evidence"], json!([FOUND]));
        let invented = json!({"evidence": "Pierre Curie was born in Paris.",
            "question": "Where was Pierre Curie born, in which city?", "answer": "In Paris."});
        assert!(matches!(
            p.accept(&slot, &invented, None),
            Err(Rejection::Judge { .. })
        ));
        let bad = json!({"evidence": BORN, "question": "Where did Pierre Curie die?", "answer": "Pierre Curie died in Vienna in 1921 after a long illness."});
        assert!(matches!(
            p.accept(&slot, &bad, None),
            Err(Rejection::Unsupported { .. })
        ));
        let same = json!({"evidence": BORN, "question": "How does Pierre Curie's birth differ from his brother's?",
            "answer": "Pierre Curie was born in Paris in 1859, while his brother was born in Paris in 1859."});
        match p.accept(&slot, &same, None) {
            Err(Rejection::EmptyContrast { repeated }) => {
                assert_eq!(repeated, "was born in paris in 1859")
            }
            other => panic!("{other:?}"),
        }
    }

    /// A conversational scenario over one chunk becomes a row with
    /// DeepEval's golden fields beside `assay eval`'s, its outcome checked
    /// like an answer; an answer without a scenario is the judge's fault.
    #[test]
    fn a_conversation_is_kept_with_its_scenario_and_outcome() {
        let d = docs();
        let mix: Mix = "conversation=1".parse().unwrap();
        let mut p = prepare(&d, &Options { mix, ..options(2) });
        let slot = p.slots[1].clone().unwrap();
        assert_eq!(
            (slot.kind, slot.partner),
            (QuestionType::Conversation, None)
        );
        let request = p.request(&slot, 0, None);
        assert_eq!(request.prompt, "generate/conversation");
        assert!(request.schema["required"]
            .as_array()
            .unwrap()
            .contains(&json!("scenario")));
        let outcome = "Pierre Curie was born in Paris in 1859.";
        let answer = json!({
            "scenario": "A student writing about the Curies wants to know where Pierre was born.",
            "question": "Where was Pierre Curie born?",
            "answer": outcome,
        });
        let unscripted = json!({"question": "Where was Pierre Curie born?", "answer": outcome});
        assert!(matches!(
            p.accept(&slot, &unscripted, None),
            Err(Rejection::Judge { .. })
        ));
        let row = p.accept(&slot, &answer, None).unwrap();
        assert_eq!(row["question_type"], "conversation");
        assert_eq!(row["scenario"], answer["scenario"]);
        assert_eq!(row["user_description"], row["persona"]);
        assert_eq!(row["expected_outcome"], outcome);
        assert_eq!(row["reference"], outcome);
        let invented = json!({
            "scenario": "A student wants to know where Pierre died.",
            "question": "Where did Pierre Curie die?",
            "answer": "Pierre Curie died in Vienna in 1921 after a long illness.",
        });
        assert!(matches!(
            p.accept(&slot, &invented, None),
            Err(Rejection::Unsupported { .. })
        ));
        // What the local 0.5B judge wrote: the worked example's first
        // message and the instruction as the scenario, an outcome from
        // the context.
        let copied = json!({
            "scenario": "The first message must make sense to an assistant that has not seen the context.",
            "question": "When can I visit the museum for free? Where was Pierre Curie born?",
            "answer": outcome,
        });
        match p.accept(&slot, &copied, None) {
            Err(Rejection::CopiesPrompt { copied }) => {
                assert_eq!(copied, "can i visit the museum")
            }
            other => panic!("{other:?}"),
        }
        let instruction = json!({
            "scenario": copied["scenario"],
            "question": "Where was Pierre Curie born, then?",
            "answer": outcome,
        });
        assert!(matches!(
            p.accept(&slot, &instruction, None),
            Err(Rejection::CopiesPrompt { .. })
        ));
    }

    /// A question asked again from other chunks of its document: the
    /// next ones in order, around the end, each once, at most
    /// [`CHUNKS_PER_QUESTION`] in all.
    #[test]
    fn a_question_falls_back_to_other_chunks_of_its_document() {
        let parts = [
            "The first part of the text holds enough words to be asked about here.",
            "The second part of the text holds enough words to be asked about too.",
            "The third part of the text holds enough words to be asked about as well.",
            "A fourth part tells of rivers, mountains and the towns along the coast.",
            "A fifth part lists the bridges, ferries and roads that join the islands.",
            "The sixth and last part names the harbours where the boats wait in winter.",
        ];
        let text: Vec<String> = parts
            .iter()
            .enumerate()
            .map(|(n, part)| format!("# Part {}\n\n{part}", n + 1))
            .collect();
        let d = vec![Document::markdown("parts.md", &text.join("\n\n"))];
        let p = prepare(
            &d,
            &Options {
                chunk_tokens: 20,
                ..options(1)
            },
        );
        let n = p.pieces.len();
        assert_eq!(n, parts.len());
        assert!(CHUNKS_PER_QUESTION < n);
        let slot = p.slots[0].clone().unwrap();
        assert_eq!(p.fallback(&slot, 0), None);
        let chunks: Vec<usize> = (1..CHUNKS_PER_QUESTION)
            .map(|k| p.fallback(&slot, k).unwrap().chunk)
            .collect();
        let next: Vec<usize> = (1..CHUNKS_PER_QUESTION)
            .map(|k| (slot.chunk + k) % n)
            .collect();
        assert_eq!(chunks, next);
        assert_eq!(p.fallback(&slot, CHUNKS_PER_QUESTION), None);
        let moved = p.fallback(&slot, 1).unwrap();
        assert_eq!(
            (moved.persona, moved.style, moved.kind),
            (slot.persona, slot.style, slot.kind)
        );
        assert_ne!(
            p.request(&moved, 0, None).user,
            p.request(&slot, 0, None).user
        );
    }

    /// A question none of whose candidates was kept in its own document
    /// moves to the next document with a chunk its type can ask about and
    /// not already given a question beyond its quota, on a chunk no
    /// planned question asks about; with every other document full, it
    /// has nowhere to go.
    #[test]
    fn a_question_moves_to_another_document_within_one_of_its_quota() {
        let text = |topic: &str| {
            format!(
                "# {topic}\n\nThe first part about {topic} holds enough words to be asked about here.\n\n\
                 # More\n\nThe second part about {topic} holds enough words to be asked about too."
            )
        };
        let d = vec![
            Document::markdown("a.md", &text("apples")),
            Document::markdown("b.md", &text("bridges")),
            Document::markdown("c.md", &text("comets")),
        ];
        let p = prepare(
            &d,
            &Options {
                chunk_tokens: 20,
                ..options(3)
            },
        );
        let slot = p
            .slots
            .iter()
            .flatten()
            .find(|s| s.document == 0)
            .unwrap()
            .clone();
        let moved = p.elsewhere(&slot, &[]).unwrap();
        assert_eq!(moved.document, 1);
        assert_eq!(p.pieces[moved.chunk].document, 1);
        let planned: Vec<usize> = p.slots.iter().flatten().map(|s| s.chunk).collect();
        assert!(!planned.contains(&moved.chunk));
        assert_eq!(
            (moved.persona, moved.style, moved.kind),
            (slot.persona, slot.style, slot.kind)
        );
        assert_eq!(p.elsewhere(&slot, &[1]).unwrap().document, 2);
        assert_eq!(p.elsewhere(&slot, &[1, 2]), None);
    }

    /// A first request is answered greedily; a retry is drawn at the
    /// retry temperature, each attempt with its own seed, the same seeds
    /// on every run.
    #[test]
    fn retries_are_drawn_with_seeds_of_their_own() {
        let d = docs();
        let (p, slot) = curie_single_hop(&d);
        assert_eq!(p.request(&slot, 0, None).draw, None);
        let second = p.request(&slot, 1, None).draw.unwrap();
        let third = p.request(&slot, 2, None).draw.unwrap();
        assert_eq!(second.temperature, RETRY_TEMPERATURE);
        assert_ne!(second.seed, third.seed);
        let again = prepare(&d, &options(4));
        assert_eq!(again.request(&slot, 1, None).draw, Some(second));
    }

    /// An answer that copies the advice its retry was given, or the worked
    /// example's answer, copies the prompt; the same answer with no
    /// retry's advice shown is read as any other.
    #[test]
    fn an_answer_that_copies_the_retry_s_advice_or_the_example_copies_the_prompt() {
        let d = docs();
        let (p, slot) = curie_single_hop(&d);
        let why = Rejection::Unfinished {
            part: check::Part::Answer,
            ending: "the".into(),
        };
        let told = Earlier {
            question: Some("Where was Pierre Curie born?"),
            why: &why,
        };
        let leaked = json!({"evidence": BORN, "question": "Where was Pierre Curie born?",
            "answer": "Pierre Curie was born in Paris. Write it whole, with any quotation marks it copies escaped."});
        let copied =
            |r: Result<Checked, Rejection>| matches!(r, Err(Rejection::CopiesPrompt { .. }));
        assert!(copied(p.check(&slot, &leaked, None, Some(told))));
        assert!(!copied(p.check(&slot, &leaked, None, None)));
        let example = json!({"evidence": FOUND, "question": "Where did Pierre Curie work?",
            "answer": "Radium was discovered by Marie and Pierre Curie in 1898."});
        assert!(copied(p.check(&slot, &example, None, None)));
        let own = json!({"evidence": BORN, "question": "Where was Pierre Curie born?",
            "answer": "Pierre Curie was born in Paris in 1859."});
        assert!(p.check(&slot, &own, None, Some(told)).is_ok());
    }

    /// A question worded differently from one kept is still its duplicate
    /// when their embeddings say they mean the same; without embeddings
    /// only the words are compared.
    #[test]
    fn questions_that_mean_the_same_are_duplicates_by_their_embeddings() {
        let d = docs();
        let (mut p, slot) = curie_single_hop(&d);
        let first = json!({"evidence": BORN, "question": "Where was Pierre Curie born?", "answer": "Pierre Curie was born in Paris in 1859."});
        let reworded = json!({"evidence": BORN, "question": "In which city did Pierre Curie come into the world?", "answer": "He was born in Paris, in 1859."});
        let other = json!({"evidence": FOUND, "question": "What did Pierre Curie discover with Marie Curie?", "answer": "With Marie Curie he discovered radium and polonium."});
        let near = dedup::SAME_MEANING_FROM as f32 + 0.01;
        let along = |c: f32| Some(vec![c, (1.0 - c * c).sqrt()]);
        p.accept(&slot, &first, along(1.0)).unwrap();
        match p.accept(&slot, &reworded, along(near)) {
            Err(Rejection::Duplicate {
                of,
                similarity,
                measure: Similarity::Cosine,
            }) => {
                assert_eq!(of, "Where was Pierre Curie born?");
                assert!((similarity - f64::from(near)).abs() < 1e-6, "{similarity}");
            }
            other => panic!("{other:?}"),
        }
        p.accept(&slot, &other, along(0.5)).unwrap();
        let mut words_only = prepare(&d, &options(4));
        words_only.accept(&slot, &first, None).unwrap();
        words_only.accept(&slot, &reworded, None).unwrap();
    }

    /// Two questions worded apart whose answers state the same thing ask
    /// for one fact: the second is a duplicate by its answer, with or
    /// without embeddings, and so is one whose answer holds all of an
    /// earlier one; a short answer that many questions share is not
    /// compared.
    #[test]
    fn questions_whose_answers_state_the_same_are_duplicates() {
        let d = docs();
        let (mut p, slot) = curie_single_hop(&d);
        let first = json!({"evidence": BORN, "question": "Where was Pierre Curie born?",
            "answer": "Pierre Curie was born in Paris in 1859."});
        let same = json!({"evidence": BORN, "question": "In which year did Pierre Curie come into the world?",
            "answer": "Pierre Curie was born in Paris, in 1859."});
        p.accept(&slot, &first, None).unwrap();
        match p.accept(&slot, &same, None) {
            Err(Rejection::Duplicate {
                of,
                similarity,
                measure: Similarity::AnswerJaccard,
            }) => {
                assert_eq!(of, "Where was Pierre Curie born?");
                assert_eq!(similarity, 1.0);
            }
            other => panic!("{other:?}"),
        }
        let within = json!({"evidence": BORN, "question": "What kind of physicist was Pierre Curie, and where was he born?",
            "answer": "Pierre Curie was born in Paris in 1859, a French physicist."});
        match p.accept(&slot, &within, None) {
            Err(Rejection::Duplicate {
                measure: Similarity::AnswerWithin,
                similarity,
                ..
            }) => assert_eq!(similarity, 1.0),
            other => panic!("{other:?}"),
        }
        let mut short = prepare(&d, &options(4));
        let with = json!({"evidence": FOUND, "question": "What did Pierre Curie discover with Marie Curie?",
            "answer": "Radium and polonium."});
        let found = json!({"evidence": FOUND, "question": "What did Marie Curie and Pierre Curie discover in pitchblende in 1898?",
            "answer": "Radium and polonium."});
        short.accept(&slot, &with, None).unwrap();
        short.accept(&slot, &found, None).unwrap();
    }

    #[test]
    fn a_document_without_text_to_ask_about_is_a_shortfall() {
        let d = vec![
            Document::markdown("empty.md", "# Only a title\n"),
            docs().remove(1),
        ];
        let p = prepare(&d, &options(4));
        // Document 0 takes a single-hop and a multi-hop question, document
        // 1 an abstract and a single-hop one; its one chunk has no partner.
        let short: Vec<&Shortfall> = p.slots.iter().filter_map(|s| s.as_ref().err()).collect();
        assert_eq!(
            short,
            [
                &Shortfall::NoChunks { document: 0 },
                &Shortfall::NoChunks { document: 0 },
                &Shortfall::NoLinkedChunk {
                    document: 1,
                    kind: QuestionType::Abstract
                },
            ]
        );
    }
}

#[cfg(test)]
mod languages {
    use super::*;

    /// A German document's questions are asked in German; a question the
    /// judge writes in English is rejected, one in German kept.
    #[test]
    fn a_german_document_s_questions_are_german() {
        let text = "# Python\n\nPython ist eine universelle, üblicherweise interpretierte höhere \
                    Programmiersprache. Sie wurde Anfang der 1990er Jahre von Guido van Rossum am \
                    Centrum Wiskunde & Informatica in Amsterdam entwickelt. Die Sprache hat ihren \
                    Namen von der britischen Komikergruppe Monty Python.";
        let d = vec![Document::markdown("python.md", text)];
        let options = Options {
            size: 1,
            min_chunk_tokens: 10,
            mix: "single_hop=1".parse().unwrap(),
            ..Options::default()
        };
        let mut p = prepare(&d, &options);
        assert_eq!(p.languages, [Some("German".to_string())]);
        let slot = p.slots[0].clone().unwrap();
        assert!(p
            .request(&slot, 0, None)
            .system
            .contains("Write the question and the answer in German."));
        let cited = "Sie wurde Anfang der 1990er Jahre von Guido van Rossum am Centrum Wiskunde & \
                     Informatica in Amsterdam entwickelt.";
        let english = json!({
            "evidence": cited,
            "question": "Who developed the programming language Python in Amsterdam?",
            "answer": "Python wurde Anfang der 1990er Jahre von Guido van Rossum am Centrum Wiskunde & Informatica in Amsterdam entwickelt."
        });
        assert_eq!(
            p.accept(&slot, &english, None),
            Err(Rejection::OtherLanguage {
                expected: "German".into(),
                found: "English".into()
            })
        );
        let german = json!({
            "evidence": cited,
            "question": "Von wem und wo wurde die Programmiersprache Python entwickelt?",
            "answer": "Sie wurde Anfang der 1990er Jahre von Guido van Rossum am Centrum Wiskunde & Informatica in Amsterdam entwickelt."
        });
        let row = p.accept(&slot, &german, None).unwrap();
        assert_eq!(row["meta"]["language"], "German");
    }
}
