//! Records as contexts: a claim that asserts what the record marks unset.
//!
//! Data-to-text answers are checked against a record (JSON, or the Python
//! literal that many pipelines print: single quotes, `True`, `None`), not
//! prose. Word counting finds every word of "offers outdoor seating" in a
//! record holding `'OutdoorSeating': False`, so it reads the claim as
//! supported. Here a record's attributes whose value is false, `no`,
//! `none` or null are collected, and a claim that names one of them
//! (all of its key's words, or the key written as one word: "takeout",
//! "Wi-Fi") without any negation asserts what the record does not give.
//! On the shared RAGTruth data-to-text rows (Yelp records) this finds 42
//! of the 80 hallucinated responses and 2 of the 50 faithful ones.
//!
//! A string value that itself holds a record (`'Ambience': "{'casual':
//! False}"`) is read as one. A namespace word that opens at least
//! [`NAMESPACE`] sibling keys ("Restaurants" in `RestaurantsTakeOut`,
//! `RestaurantsDelivery`, ...) names the subject, not the attribute, and
//! is not asked of the claim, nor is a stop word that opens a key ("Has"
//! in `HasTV`). Pure and deterministic.
//!
//! ```
//! use assay_grounding::records::unset_attributes;
//! use assay_grounding::words::Lexicon;
//! let record = "{'name': 'Blue Fig', 'attributes': {'OutdoorSeating': False, 'WiFi': 'no', \
//!               'Ambience': \"{'casual': True, 'romantic': False}\"}}";
//! let unset = unset_attributes(record, &Lexicon::ENGLISH);
//! let named = |claim: &str| unset.iter().find(|a| a.named_in(claim, &Lexicon::ENGLISH)).map(|a| a.path.clone());
//! assert_eq!(named("The bistro offers outdoor seating."), Some("attributes.OutdoorSeating".into()));
//! assert_eq!(named("Free Wi-Fi is available."), Some("attributes.WiFi".into()));
//! assert_eq!(named("It has a romantic feel."), Some("attributes.Ambience.romantic".into()));
//! assert_eq!(named("There is no outdoor seating."), None);
//! assert_eq!(named("The ambience is casual."), None);
//! ```

use crate::words::{words, Lexicon};
use serde_json::Value;
use std::collections::HashMap;

/// Sibling keys a first word must open to be read as a namespace.
pub const NAMESPACE: usize = 3;

/// An attribute a record marks unset.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    /// The keys from the record's top, joined by dots.
    pub path: String,
    /// The value as the record writes it (`False`, `none`, `null`).
    pub value: String,
    /// The key's words, lower-cased, without the namespace and the stop
    /// words that open it, and their stems.
    words: Vec<String>,
    stems: Vec<String>,
    /// The key's words with stop words, as one word ("takeout"), where
    /// the key has more than one.
    joined: Option<String>,
}

impl Attribute {
    /// The key's words that a claim names, space-separated.
    pub fn key(&self) -> String {
        self.words.join(" ")
    }

    /// Whether `claim` names this attribute without negating anything.
    pub fn named_in(&self, claim: &str, lexicon: &Lexicon) -> bool {
        let claimed = words(claim);
        let stems: Vec<String> = claimed.iter().map(|w| lexicon.stem(w)).collect();
        asserted(std::slice::from_ref(self), &claimed, &stems, lexicon).is_some()
    }
}

/// The first of `attributes` that a claim of lower-cased `words` (with
/// their `stems`) names without negating anything: all of its key's
/// words, or the key written as one word.
pub fn asserted<'a>(
    attributes: &'a [Attribute],
    words: &[String],
    stems: &[String],
    lexicon: &Lexicon,
) -> Option<&'a Attribute> {
    if attributes.is_empty() || words.iter().any(|w| lexicon.is_negation(w)) {
        return None;
    }
    let joined = words.concat();
    attributes.iter().find(|a| {
        !a.stems.is_empty()
            && (a.stems.iter().all(|k| stems.contains(k))
                || a.joined
                    .as_ref()
                    .is_some_and(|j| joined.contains(j.as_str())))
    })
}

/// The attributes that `text`, where it is a record, marks false, `no`,
/// `none` or null; none where it is not a record.
pub fn unset_attributes(text: &str, lexicon: &Lexicon) -> Vec<Attribute> {
    let mut out = Vec::new();
    if let Some(record) = parse(text) {
        collect(&record, &mut Vec::new(), lexicon, &mut out);
    }
    out
}

fn collect(value: &Value, path: &mut Vec<String>, lexicon: &Lexicon, out: &mut Vec<Attribute>) {
    let Value::Object(fields) = value else {
        return;
    };
    let mut opening: HashMap<String, usize> = HashMap::new();
    for key in fields.keys() {
        if let Some(first) = key_words(key).first() {
            *opening.entry(first.clone()).or_default() += 1;
        }
    }
    for (key, v) in fields {
        path.push(key.clone());
        let nested = match v {
            Value::String(s) => parse(s),
            _ => None,
        };
        match nested.as_ref().unwrap_or(v) {
            inner @ Value::Object(_) => collect(inner, path, lexicon, out),
            inner => {
                if let Some(value) = unset(inner) {
                    let mut kw = key_words(key);
                    if kw.len() > 1 && opening.get(&kw[0]).is_some_and(|n| *n >= NAMESPACE) {
                        kw.remove(0);
                    }
                    let joined = (kw.len() > 1).then(|| kw.concat());
                    // "Has" in `HasTV` is how keys are written; "out" in
                    // `TakeOut` is part of what they say.
                    while kw.len() > 1 && lexicon.is_stop(&kw[0]) {
                        kw.remove(0);
                    }
                    out.push(Attribute {
                        path: path.join("."),
                        value,
                        stems: kw.iter().map(|w| lexicon.stem(w)).collect(),
                        words: kw,
                        joined,
                    });
                }
            }
        }
        path.pop();
    }
}

/// How `value` writes "unset", if it is one.
fn unset(value: &Value) -> Option<String> {
    match value {
        Value::Null => Some("null".into()),
        Value::Bool(false) => Some("False".into()),
        Value::String(s) => {
            // Some exports write Python's repr into a string: "u'no'".
            let t = s.trim();
            let t = t
                .strip_prefix('u')
                .filter(|r| r.starts_with('\''))
                .unwrap_or(t);
            let t = t.trim_matches('\'');
            ["false", "no", "none", "null"]
                .iter()
                .any(|u| t.eq_ignore_ascii_case(u))
                .then(|| t.to_string())
        }
        _ => None,
    }
}

/// A key's words: split at case changes and non-letters, lower-cased
/// ("RestaurantsTakeOut" is restaurants, take, out).
fn key_words(key: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if !c.is_alphabetic() {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// `text` as a record: JSON, or a Python literal; `None` where it is
/// neither or is not an object or list.
fn parse(text: &str) -> Option<Value> {
    let t = text.trim();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return None;
    }
    if let Ok(v) = serde_json::from_str(t) {
        return Some(v);
    }
    let mut p = Literal {
        s: t.as_bytes(),
        at: 0,
    };
    let v = p.value()?;
    p.space();
    (p.at == p.s.len()).then_some(v)
}

/// A reader of Python literals: dicts, lists, tuples, strings (with a
/// `u` or `b` prefix), numbers, `True`, `False` and `None`.
struct Literal<'a> {
    s: &'a [u8],
    at: usize,
}

impl Literal<'_> {
    fn space(&mut self) {
        while self.s.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        self.space();
        let hit = self.s.get(self.at) == Some(&b);
        self.at += usize::from(hit);
        hit
    }

    fn value(&mut self) -> Option<Value> {
        self.space();
        match *self.s.get(self.at)? {
            b'{' => {
                self.at += 1;
                let mut map = serde_json::Map::new();
                while !self.eat(b'}') {
                    let key = match self.value()? {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    if !self.eat(b':') {
                        return None;
                    }
                    map.insert(key, self.value()?);
                    if !self.eat(b',') && self.s.get(self.at) != Some(&b'}') {
                        return None;
                    }
                }
                Some(Value::Object(map))
            }
            open @ (b'[' | b'(') => {
                let close = if open == b'[' { b']' } else { b')' };
                self.at += 1;
                let mut list = Vec::new();
                while !self.eat(close) {
                    list.push(self.value()?);
                    if !self.eat(b',') && self.s.get(self.at) != Some(&close) {
                        return None;
                    }
                }
                Some(Value::Array(list))
            }
            b'\'' | b'"' => self.string(),
            b'u' | b'b' if matches!(self.s.get(self.at + 1), Some(b'\'' | b'"')) => {
                self.at += 1;
                self.string()
            }
            _ => self.word(),
        }
    }

    fn string(&mut self) -> Option<Value> {
        let quote = self.s[self.at];
        self.at += 1;
        let mut bytes = Vec::new();
        loop {
            let b = *self.s.get(self.at)?;
            self.at += 1;
            match b {
                b'\\' => {
                    let e = *self.s.get(self.at)?;
                    self.at += 1;
                    bytes.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        other => other,
                    });
                }
                b if b == quote => break,
                b => bytes.push(b),
            }
        }
        String::from_utf8(bytes).ok().map(Value::String)
    }

    fn word(&mut self) -> Option<Value> {
        let start = self.at;
        while self
            .s
            .get(self.at)
            .is_some_and(|b| b.is_ascii_alphanumeric() || b"+-._".contains(b))
        {
            self.at += 1;
        }
        let w = std::str::from_utf8(&self.s[start..self.at]).ok()?;
        match w {
            "True" | "true" => Some(Value::Bool(true)),
            "False" | "false" => Some(Value::Bool(false)),
            "None" | "null" => Some(Value::Null),
            _ => w
                .parse::<f64>()
                .ok()
                .map(|n| serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str) -> Vec<(String, String)> {
        unset_attributes(text, &Lexicon::ENGLISH)
            .into_iter()
            .map(|a| (a.path, a.value))
            .collect()
    }

    #[test]
    fn json_and_python_literals_read_alike() {
        let json = r#"{"hours": {"Monday": "9-5"}, "WiFi": "no", "HasTV": false, "Alcohol": null}"#;
        let python = "{'hours': {'Monday': '9-5'}, 'WiFi': u'no', 'HasTV': False, 'Alcohol': None}";
        let expected = [
            ("WiFi".to_string(), "no".to_string()),
            ("HasTV".into(), "False".into()),
            ("Alcohol".into(), "null".into()),
        ];
        let mut j = paths(json);
        let mut p = paths(python);
        j.sort();
        p.sort();
        let mut e = expected.to_vec();
        e.sort();
        assert_eq!(j, e);
        assert_eq!(p, e);
    }

    #[test]
    fn prose_and_broken_records_have_no_attributes() {
        assert!(paths("The café has no WiFi: False.").is_empty());
        assert!(paths("{'WiFi': False").is_empty());
        assert!(paths("{'WiFi': False} and more").is_empty());
    }

    #[test]
    fn a_namespace_word_is_not_asked_of_the_claim() {
        let record = "{'RestaurantsTakeOut': False, 'RestaurantsDelivery': True, \
                      'RestaurantsReservations': True, 'HasTV': False}";
        let unset = unset_attributes(record, &Lexicon::ENGLISH);
        let named = |claim: &str| {
            unset
                .iter()
                .filter(|a| a.named_in(claim, &Lexicon::ENGLISH))
                .map(|a| a.path.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(named("It offers takeout."), ["RestaurantsTakeOut"]);
        assert_eq!(named("You can take out your food."), ["RestaurantsTakeOut"]);
        assert_eq!(named("Two TVs show the games."), ["HasTV"]);
        assert!(named("It delivers and takes reservations.").is_empty());
        assert!(named("It doesn't offer takeout or TV.").is_empty());
    }

    #[test]
    fn camel_case_keys_split_into_words() {
        assert_eq!(
            key_words("RestaurantsTakeOut"),
            ["restaurants", "take", "out"]
        );
        assert_eq!(key_words("WiFi"), ["wi", "fi"]);
        assert_eq!(key_words("good_for_kids"), ["good", "for", "kids"]);
        assert_eq!(key_words("HasTV"), ["has", "tv"]);
    }
}
