//! A parsed document: the pristine input, simd-json's tape over a padded
//! copy of it kept in a bumpalo arena, and the raw byte span of every node.
//!
//! [`Parser`] owns everything that can be reused from one document to the
//! next (simd-json's `Buffers`, the tape's allocation, the arena, the span
//! table, the container stacks of the span pass and of the fallback parser),
//! so that in steady state parsing one more small document makes no heap
//! allocation at all. A [`Document`] borrows the parser; dropping it hands
//! the tape, the span table and the span stack back.

use std::cell::{Cell, RefCell};

use bumpalo::Bump;
use simd_json::{Buffers, INPUT_PADDING, Node, Tape};

use super::error::{JsonError, JsonErrorKind};
use super::value::Value;
use super::{MAX_DEPTH, fallback};

/// The alignment of the padded copy simd-json reads (a cache line).
const COPY_ALIGN: usize = 64;

/// A byte range `[start, end)` of the pristine input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// Offset of the first byte.
    pub start: u32,
    /// Offset one past the last byte.
    pub end: u32,
}

impl Span {
    /// The span's length in bytes.
    pub fn len(self) -> usize {
        self.end.saturating_sub(self.start) as usize
    }

    /// Whether the span is empty.
    pub fn is_empty(self) -> bool {
        self.end <= self.start
    }

    /// The span as a `usize` range.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// Which parser produced a document's tape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Strict JSON, parsed by simd-json.
    Strict,
    /// Input simd-json refuses but Python's `json` reads: `NaN`, `Infinity`,
    /// `-Infinity`, integers beyond 64 bits, floats that overflow to
    /// infinity, lone surrogate escapes. Parsed by the crate's own fallback
    /// parser; see the [module docs](super#python-quirks).
    Python,
}

/// A reusable JSON parser: simd-json's buffers, the tape, the arena and the
/// span table, kept from one document to the next.
pub struct Parser {
    buffers: Buffers,
    tape: Tape<'static>,
    arena: Bump,
    spans: Vec<Span>,
    stack: Vec<fallback::Open>,
    span_stack: Vec<u32>,
}

/// A parser lent from this thread's pool (a new one when the pool is
/// empty); dropped, it goes back to the pool, so that code parsing many
/// small stores in a row (one conversation after another) reuses the
/// buffers instead of allocating and growing them each time. A parser
/// whose arena grew past [`POOL_KEEP`] bytes is freed instead, and the pool
/// holds at most [`POOL_SIZE`] parsers, so what it keeps is bounded.
pub(crate) struct PooledParser(Option<Parser>);

/// The arena size above which a lent parser is freed rather than kept.
const POOL_KEEP: usize = 8 << 20;
/// How many idle parsers a thread keeps.
const POOL_SIZE: usize = 4;

thread_local! {
    static POOL: std::cell::RefCell<Vec<Parser>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl PooledParser {
    /// A parser from this thread's pool, or a new one.
    pub(crate) fn take() -> PooledParser {
        let kept = POOL
            .try_with(|p| p.try_borrow_mut().ok().and_then(|mut p| p.pop()))
            .ok()
            .flatten();
        PooledParser(Some(kept.unwrap_or_default()))
    }
}

impl std::ops::Deref for PooledParser {
    type Target = Parser;
    fn deref(&self) -> &Parser {
        self.0
            .as_ref()
            .unwrap_or_else(|| unreachable!("taken only on drop"))
    }
}

impl std::ops::DerefMut for PooledParser {
    fn deref_mut(&mut self) -> &mut Parser {
        self.0
            .as_mut()
            .unwrap_or_else(|| unreachable!("taken only on drop"))
    }
}

impl Drop for PooledParser {
    fn drop(&mut self) {
        let Some(parser) = self.0.take() else { return };
        if parser.arena.allocated_bytes() > POOL_KEEP {
            return;
        }
        // During the thread's teardown the pool may be gone: the parser is
        // then simply freed.
        let _ = POOL.try_with(|p| {
            if let Ok(mut p) = p.try_borrow_mut()
                && p.len() < POOL_SIZE
            {
                p.push(parser);
            }
        });
    }
}

impl Default for Parser {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Parser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parser")
            .field("arena_bytes", &self.arena.allocated_bytes())
            .field("tape_capacity", &self.tape.0.capacity())
            .finish()
    }
}

impl Parser {
    /// A parser with buffers sized for a typical 16 KiB document; they grow
    /// as needed and are kept.
    pub fn new() -> Self {
        Self::with_capacity(16 * 1024)
    }

    /// A parser with buffers sized for documents of `len` bytes.
    pub fn with_capacity(len: usize) -> Self {
        let mut tape = Tape::null().reset();
        tape.0.reserve(len / 4);
        Parser {
            buffers: Buffers::with_max_depth(len, MAX_DEPTH),
            tape,
            arena: Bump::with_capacity(len + INPUT_PADDING + COPY_ALIGN + 64),
            spans: Vec::with_capacity(len / 4),
            stack: Vec::with_capacity(64),
            span_stack: Vec::with_capacity(64),
        }
    }

    /// Parses `input` (the pristine bytes, which are never modified) into a
    /// document that borrows both the input and this parser.
    ///
    /// Strict JSON goes through simd-json. Input it refuses is tried once
    /// more with the fallback parser, which also accepts what Python's
    /// `json` module accepts beyond the standard (see [`Dialect::Python`]);
    /// what neither accepts is an error with the byte offset of the fault.
    pub fn parse<'p>(&'p mut self, input: &'p [u8]) -> Result<Document<'p>, JsonError> {
        if input.len() > u32::MAX as usize - 2 * INPUT_PADDING {
            return Err(JsonError::new(JsonErrorKind::TooLarge, None, ""));
        }
        if input.starts_with(b"\xef\xbb\xbf") {
            return Err(JsonError::new(JsonErrorKind::Bom, Some(0), ""));
        }
        if input
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            return Err(JsonError::new(JsonErrorKind::Empty, Some(0), ""));
        }
        let Parser {
            buffers,
            tape,
            arena,
            spans,
            stack,
            span_stack,
        } = self;
        arena.reset();
        let arena: &'p Bump = arena;
        let len = input.len();
        // The padded copy: one copy of the input and zeroed padding (not a
        // zero fill of the whole then a copy over it), starting on a 64-byte
        // boundary. The arena hands out byte slices at any address; on a
        // misaligned copy every other SIMD load of simd-json's stage 1
        // straddles two cache lines, which measurably slows the parse.
        const ZEROS: [u8; COPY_ALIGN + INPUT_PADDING] = [0; COPY_ALIGN + INPUT_PADDING];
        let mut padded: bumpalo::collections::Vec<'p, u8> =
            bumpalo::collections::Vec::with_capacity_in(len + INPUT_PADDING + COPY_ALIGN, arena);
        let skew = padded.as_ptr().align_offset(COPY_ALIGN).min(COPY_ALIGN - 1);
        padded.extend_from_slices_copy(&[
            ZEROS.get(..skew).unwrap_or_default(),
            input,
            ZEROS.get(..INPUT_PADDING).unwrap_or_default(),
        ]);
        let padded: &'p mut [u8] = padded.into_bump_slice_mut();
        let padded: &'p mut [u8] = padded.get_mut(skew..).unwrap_or_default();
        let mut work: Tape<'p> = std::mem::replace(tape, Tape(Vec::new())).reset();
        spans.clear();
        let strict = simd_json::fill_tape_padded(padded, len, buffers, &mut work);
        let (dialect, structurals): (Dialect, &'p [u32]) = match strict {
            Ok(()) => (Dialect::Strict, buffers.structural_indexes()),
            Err(e) => {
                work.0.clear();
                let hint = e.index();
                match fallback::parse(input, arena, &mut work.0, spans, stack) {
                    Ok(()) => (Dialect::Python, &[]),
                    Err(mut err) => {
                        *tape = work.reset();
                        if err.offset().is_none() {
                            err = JsonError::new(err.kind(), Some(hint), err.detail());
                        }
                        return Err(err);
                    }
                }
            }
        };
        let ready = dialect == Dialect::Python;
        Ok(Document {
            core: DocCore {
                tape: work,
                input,
                structurals,
                spans: RefCell::new(std::mem::take(spans)),
                spans_ready: Cell::new(ready),
                span_stack: RefCell::new(std::mem::take(span_stack)),
                arena,
                dialect,
            },
            tape_slot: tape,
            span_slot: spans,
            span_stack_slot: span_stack,
        })
    }
}

/// The parts of a document values borrow. Covariant in its lifetime, so a
/// value's lifetime is simply the borrow of the document.
pub(crate) struct DocCore<'p> {
    pub(crate) tape: Tape<'p>,
    pub(crate) input: &'p [u8],
    structurals: &'p [u32],
    spans: RefCell<Vec<Span>>,
    spans_ready: Cell<bool>,
    /// The open containers of the span pass (the parser's, reused).
    span_stack: RefCell<Vec<u32>>,
    pub(crate) arena: &'p Bump,
    dialect: Dialect,
}

impl<'p> DocCore<'p> {
    #[inline]
    pub(crate) fn nodes(&self) -> &[Node<'p>] {
        &self.tape.0
    }

    /// Which parser produced the tape.
    #[inline]
    pub(crate) fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The raw span of node `idx`, computing the span table on first use.
    pub(crate) fn span(&self, idx: usize) -> Span {
        if !self.spans_ready.get() {
            self.compute_spans();
        }
        self.spans.borrow().get(idx).copied().unwrap_or_default()
    }

    /// One pass over simd-json's structural indexes gives every node its
    /// span: dropping the `:` `,` `}` `]` entries leaves one offset per tape
    /// node, in tape order; a container ends at its matching close, a scalar
    /// or string just before the next structural (less white space).
    fn compute_spans(&self) {
        let mut spans = self.spans.borrow_mut();
        spans.clear();
        let n = self.tape.0.len();
        spans.resize(n, Span::default());
        let input = self.input;
        let idx = self.structurals;
        // Open containers: node indexes (at most MAX_DEPTH of them), in a
        // stack the parser keeps from one document to the next.
        let mut open = self.span_stack.borrow_mut();
        open.clear();
        let mut node = 0usize;
        for (k, &off) in idx.iter().enumerate() {
            let off = off as usize;
            let Some(&b) = input.get(off) else { break };
            match b {
                b':' | b',' => {}
                b'}' | b']' => {
                    if let Some(o) = open.pop()
                        && let Some(s) = spans.get_mut(o as usize)
                    {
                        s.end = (off + 1) as u32;
                    }
                }
                b'{' | b'[' => {
                    if let Some(s) = spans.get_mut(node) {
                        s.start = off as u32;
                    }
                    open.push(node as u32);
                    node += 1;
                }
                _ => {
                    let next = idx.get(k + 1).map_or(input.len(), |&x| x as usize);
                    let mut end = next.min(input.len());
                    while end > off && matches!(input[end - 1], b' ' | b'\t' | b'\n' | b'\r') {
                        end -= 1;
                    }
                    if let Some(s) = spans.get_mut(node) {
                        *s = Span {
                            start: off as u32,
                            end: end as u32,
                        };
                    }
                    node += 1;
                }
            }
        }
        self.spans_ready.set(true);
    }
}

/// A parsed JSON document: the pristine input, the tape and the spans.
///
/// Values borrow the document ([`Document::root`]); strings without escapes
/// borrow the padded copy in the parser's arena, so nothing is copied per
/// value. Dropping the document hands its buffers back to the parser.
pub struct Document<'p> {
    core: DocCore<'p>,
    tape_slot: &'p mut Tape<'static>,
    span_slot: &'p mut Vec<Span>,
    span_stack_slot: &'p mut Vec<u32>,
}

impl Drop for Document<'_> {
    fn drop(&mut self) {
        let tape = std::mem::replace(&mut self.core.tape, Tape(Vec::new()));
        *self.tape_slot = tape.reset();
        *self.span_slot = std::mem::take(self.core.spans.get_mut());
        *self.span_stack_slot = std::mem::take(self.core.span_stack.get_mut());
    }
}

impl std::fmt::Debug for Document<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document")
            .field("len", &self.core.input.len())
            .field("nodes", &self.core.tape.0.len())
            .field("dialect", &self.core.dialect)
            .finish()
    }
}

impl<'p> Document<'p> {
    /// The root value.
    #[inline]
    pub fn root(&self) -> Value<'_> {
        Value::new(&self.core, 0)
    }

    /// The pristine input bytes.
    #[inline]
    pub fn input(&self) -> &'p [u8] {
        self.core.input
    }

    /// Which parser read the document.
    pub fn dialect(&self) -> Dialect {
        self.core.dialect
    }

    /// How many tape nodes the document has (every value, key and element).
    pub fn node_count(&self) -> usize {
        self.core.tape.0.len()
    }

    /// The arena the document's padded copy lives in, for callers that
    /// build borrowed structures alongside it (freed with the next parse).
    pub fn arena(&self) -> &'p Bump {
        self.core.arena
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lent parser parses as a new one does, after another document and
    /// after an error; one whose arena grew past the bound is not kept.
    #[test]
    fn a_pooled_parser_parses_as_a_new_one() {
        for input in [&b"{\"a\":[1,2,{\"b\":\"c\"}]}"[..], b"[1,", b"\"x\"", b"{}"] {
            let mut pooled = PooledParser::take();
            let mut fresh = Parser::new();
            let a = pooled.parse(input).map(|d| d.root().raw().to_vec());
            let b = fresh.parse(input).map(|d| d.root().raw().to_vec());
            assert_eq!(a.is_ok(), b.is_ok());
            assert_eq!(a.ok(), b.ok());
        }
        let big = format!("[\"{}\"]", "x".repeat(POOL_KEEP + 1));
        let mut p = PooledParser::take();
        assert!(p.parse(big.as_bytes()).is_ok());
        drop(p);
        let kept = POOL.with(|p| p.borrow().iter().map(|q| q.arena.allocated_bytes()).max());
        assert!(kept.is_none_or(|n| n <= POOL_KEEP));
    }

    /// The JSONTestSuite cases the repository carries
    /// (`tests/data/JSONTestSuite`).
    fn suite() -> Vec<(String, Vec<u8>)> {
        let dir = std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/JSONTestSuite/test_parsing"
        ));
        assert!(dir.is_dir(), "{}: JSONTestSuite is missing", dir.display());
        let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read(&p).unwrap())
            })
            .collect();
        out.sort();
        assert!(out.len() > 300);
        out
    }

    fn fallback_tape<'p>(
        input: &'p [u8],
        arena: &'p Bump,
    ) -> Result<(Vec<Node<'p>>, Vec<Span>), JsonError> {
        let (mut nodes, mut spans, mut stack) = (Vec::new(), Vec::new(), Vec::new());
        fallback::parse(input, arena, &mut nodes, &mut spans, &mut stack)?;
        Ok((nodes, spans))
    }

    /// On every document simd-json reads, the fallback parser builds the
    /// same tape and the same spans, so consumers cannot tell which ran.
    #[test]
    fn fallback_builds_simd_jsons_tape_and_spans() {
        let mut p = Parser::new();
        let mut strict = 0;
        for (name, input) in suite() {
            let Ok(doc) = p.parse(&input) else { continue };
            if doc.dialect() != Dialect::Strict {
                continue;
            }
            strict += 1;
            let arena = Bump::new();
            let (nodes, spans) = fallback_tape(&input, &arena)
                .unwrap_or_else(|e| panic!("{name}: fallback refuses: {e}"));
            assert_eq!(doc.core.nodes(), &nodes[..], "{name}: tapes differ");
            for (i, s) in spans.iter().enumerate().skip(1) {
                assert_eq!(doc.core.span(i), *s, "{name}: span of node {i}");
            }
        }
        assert!(strict >= 95, "{strict}");
    }

    /// The padded copy simd-json reads starts on a cache line, whatever the
    /// arena's state: a root string without escapes borrows the copy at
    /// offset 1.
    #[test]
    fn padded_copy_is_cache_line_aligned() {
        let mut p = Parser::new();
        for n in [0usize, 1, 5, 63, 64, 65, 1000, 40_000, 3, 17] {
            let input = format!("\"{}\"", "x".repeat(n));
            let doc = p.parse(input.as_bytes()).unwrap();
            assert_eq!(doc.dialect(), Dialect::Strict);
            let s = doc.root().as_str().unwrap();
            assert_eq!(s.len(), n);
            assert_eq!(s.as_ptr() as usize % COPY_ALIGN, 1, "length {n}");
        }
    }

    /// The fallback parser alone refuses every `n_` case but the three
    /// Python reads (`NaN`, `Infinity`, `-Infinity`).
    #[test]
    fn fallback_alone_refuses_what_python_refuses() {
        for (name, input) in suite() {
            if !name.starts_with("n_") {
                continue;
            }
            let arena = Bump::new();
            let python = matches!(
                name.as_str(),
                "n_number_NaN.json" | "n_number_infinity.json" | "n_number_minus_infinity.json"
            );
            let r = fallback_tape(&input, &arena);
            assert_eq!(r.is_ok(), python, "{name}: {r:?}");
        }
    }
}
