//! Searching the index ([`SearchIndex::search`]): ranked hits (BM25 over
//! the documents' text), each with a snippet of its text and the ranges
//! of it that matched.

use std::ops::{Bound, Range};

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, QueryParser, RangeQuery, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::snippet::SnippetGenerator;
use tantivy::{ReloadPolicy, TantivyDocument, Term};

use super::extract::DocKind;
use super::update::StoreKind;
use super::{SearchError, SearchIndex};

/// Which events a search looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Branch {
    /// Every event, on an abandoned fork branch or not.
    #[default]
    All,
    /// The events on the active branch only.
    Active,
}

/// A search.
#[derive(Debug, Clone)]
pub struct Query {
    /// The query, in tantivy's query language: words (all of them must
    /// match), `"a phrase"`, `word*` (a prefix), `-word` (not), `a OR b`.
    /// Matching is on words, case-insensitive.
    pub text: String,
    /// At most this many hits.
    pub limit: usize,
    /// Only documents of this kind.
    pub kind: Option<DocKind>,
    /// Only events at or after this time: seconds of the recorded wall
    /// clock ([`wall_seconds`](super::wall_seconds)).
    pub since: Option<i64>,
    /// Which branch.
    pub branch: Branch,
    /// The longest a snippet is, in characters.
    pub snippet_chars: usize,
}

impl Query {
    /// A search for `text`: 10 hits, any kind, any time, every branch.
    pub fn new(text: impl Into<String>) -> Query {
        Query {
            text: text.into(),
            limit: 10,
            kind: None,
            since: None,
            branch: Branch::All,
            snippet_chars: 160,
        }
    }
}

/// One hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The relevance (BM25; higher first).
    pub score: f32,
    /// The store's kind.
    pub store: StoreKind,
    /// The conversation's ID (OC Chat: the session's name).
    pub conversation: String,
    /// Its parent's ID, for a sub-agent's conversation.
    pub parent: Option<String>,
    /// The conversation's directory — what `agentlog show` takes (OC
    /// Chat: the sessions directory).
    pub path: String,
    /// The event's index (OC Chat: the message's).
    pub event: u64,
    /// What the document holds.
    pub kind: DocKind,
    /// The event's class (OC Chat: the message's role).
    pub event_kind: String,
    /// The role: `user`, `assistant`, `tool`, or the event's source.
    pub role: Option<String>,
    /// The tool, for a call, its output or its error.
    pub tool: Option<String>,
    /// The timestamp as written.
    pub timestamp: Option<String>,
    /// The conversation's model.
    pub model: Option<String>,
    /// Whether the event is on the active branch.
    pub active: bool,
    /// Whether the event is in the model's context (not condensed away,
    /// not on an abandoned branch).
    pub in_context: bool,
    /// A part of the text around the best match.
    pub snippet: String,
    /// The byte ranges of `snippet` that matched.
    pub highlights: Vec<Range<usize>>,
}

impl SearchIndex {
    /// The hits of `q`, best first.
    pub fn search(&self, q: &Query) -> Result<Vec<Hit>, SearchError> {
        let f = self.fields;
        let reader = self
            .index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| self.tv(e))?;
        let searcher = reader.searcher();
        let mut parser = QueryParser::for_index(&self.index, vec![f.body]);
        parser.set_conjunction_by_default();
        let text = parser
            .parse_query(&q.text)
            .map_err(|e| SearchError::Query(e.to_string()))?;
        let mut clauses: Vec<(Occur, Box<dyn tantivy::query::Query>)> = Vec::new();
        let term = |t: Term| -> Box<dyn tantivy::query::Query> {
            Box::new(TermQuery::new(t, IndexRecordOption::Basic))
        };
        if let Some(k) = q.kind {
            clauses.push((Occur::Must, term(Term::from_field_text(f.kind, k.as_str()))));
        }
        if q.branch == Branch::Active {
            clauses.push((Occur::Must, term(Term::from_field_u64(f.active, 1))));
        }
        if let Some(s) = q.since {
            clauses.push((
                Occur::Must,
                Box::new(RangeQuery::new(
                    Bound::Included(Term::from_field_i64(f.time, s)),
                    Bound::Unbounded,
                )),
            ));
        }
        let snippets_of = text.box_clone();
        let query: Box<dyn tantivy::query::Query> = if clauses.is_empty() {
            text
        } else {
            clauses.insert(0, (Occur::Must, text));
            Box::new(BooleanQuery::new(clauses))
        };
        let top = searcher
            .search(
                &*query,
                &TopDocs::with_limit(q.limit.max(1)).order_by_score(),
            )
            .map_err(|e| self.tv(e))?;
        if q.limit == 0 {
            return Ok(Vec::new());
        }
        let mut snippets =
            SnippetGenerator::create(&searcher, &*snippets_of, f.body).map_err(|e| self.tv(e))?;
        snippets.set_max_num_chars(q.snippet_chars);
        let mut hits = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let doc: TantivyDocument = searcher.doc(addr).map_err(|e| self.tv(e))?;
            let s = |field| {
                doc.get_first(field)
                    .and_then(|v| v.as_str())
                    .map(str::to_owned)
            };
            let u = |field| doc.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0);
            let snippet = snippets.snippet_from_doc(&doc);
            hits.push(Hit {
                score,
                store: s(f.store)
                    .as_deref()
                    .and_then(StoreKind::parse)
                    .unwrap_or(StoreKind::OpenHands),
                conversation: s(f.conversation).unwrap_or_default(),
                parent: s(f.parent),
                path: s(f.path).unwrap_or_default(),
                event: u(f.event),
                kind: s(f.kind)
                    .as_deref()
                    .and_then(DocKind::parse)
                    .unwrap_or(DocKind::Message),
                event_kind: s(f.event_kind).unwrap_or_default(),
                role: s(f.role),
                tool: s(f.tool),
                timestamp: s(f.timestamp),
                model: s(f.model),
                active: u(f.active) == 1,
                in_context: u(f.in_context) == 1,
                highlights: snippet.highlighted().to_vec(),
                snippet: snippet.fragment().to_owned(),
            });
        }
        Ok(hits)
    }
}

/// What identifies a document, and its flags ([`SearchIndex::documents`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DocEntry {
    /// The conversation's directory (OC Chat: the sessions directory).
    pub path: String,
    /// The conversation's ID (OC Chat: the session's name).
    pub conversation: String,
    /// The event's index.
    pub event: u64,
    /// What the document holds.
    pub kind: DocKind,
    /// On the active branch.
    pub active: bool,
    /// In the model's context.
    pub in_context: bool,
}

impl SearchIndex {
    /// Every document of the last commit, sorted: to compare two indexes,
    /// or to see what one holds.
    pub fn documents(&self) -> Result<Vec<DocEntry>, SearchError> {
        let f = self.fields;
        let reader = self
            .index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| self.tv(e))?;
        let searcher = reader.searcher();
        let addrs = searcher
            .search(
                &tantivy::query::AllQuery,
                &tantivy::collector::DocSetCollector,
            )
            .map_err(|e| self.tv(e))?;
        let mut out = Vec::with_capacity(addrs.len());
        for addr in addrs {
            let doc: TantivyDocument = searcher.doc(addr).map_err(|e| self.tv(e))?;
            let s = |field| {
                doc.get_first(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_owned()
            };
            let u = |field| doc.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0);
            out.push(DocEntry {
                path: s(f.path),
                conversation: s(f.conversation),
                event: u(f.event),
                kind: DocKind::parse(&s(f.kind)).unwrap_or(DocKind::Message),
                active: u(f.active) == 1,
                in_context: u(f.in_context) == 1,
            });
        }
        out.sort();
        Ok(out)
    }
}
