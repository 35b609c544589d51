//! The format-agnostic zero-copy JSON layer every reader is built on.
//!
//! - [`Parser`] parses pristine bytes with simd-json's tape over a padded
//!   copy kept in a bumpalo arena (`simd_json::fill_tape_padded`), reusing
//!   simd-json's `Buffers`, the tape, the arena, the span table and the
//!   container stacks of the span pass and of the fallback parser from one
//!   document to the next: in steady state one more small document, its
//!   spans and the lookups on it cost no heap allocation, in either dialect
//!   and at any depth (the `alloc_free` test proves it with a counting
//!   allocator). Decoding a [`json_object!`](crate::json_object) type
//!   allocates nothing for objects of up to 8 members; beyond that its
//!   member list moves to the heap.
//! - [`Document`] / [`Value`] / [`Object`] / [`Array`]: lazy handles on the
//!   tape. Member lookup walks the tape without building a map; getters
//!   never panic and answer `None` for a value of another type.
//! - Spans: every value gives its raw bytes in the pristine input
//!   ([`Value::raw`]), from one pass over simd-json's structural indexes
//!   made the first time a span is asked for.
//! - [`json_object!`](crate::json_object) and [`Members`]: lossless
//!   decoding of objects with declared members (see [`members`]).
//! - [`OwnedValue`]: an owned value with Python-compatible writing.
//!
//! # Speed
//!
//! [`Parser::parse`] is simd-json's tape over a padded copy of the input,
//! plus one pass that gives every tape node its span on demand; the
//! envelope lookup ([`Object::get_many`]) is one walk over the root's
//! members for any number of names. Buffers are reused from document to
//! document, so a parse costs no heap allocation in steady state. The padded
//! copy starts on a 64-byte boundary (so simd-json's 32-byte loads never
//! straddle two cache lines). `benches/README.md` compares it with
//! simd-json's tape alone and with `serde_json::Value`, with the figures and
//! how they were taken.
//!
//! # Duplicate member names
//!
//! Python's `json.loads` builds a dict, so the last occurrence of a name
//! wins; pydantic's JSON parser (`model_validate_json`, which the OpenHands
//! SDK uses to read events and state) does the same. Lookup here therefore
//! answers the **last** occurrence ([`Object::get`]), and decoded objects
//! keep every earlier occurrence as a raw member, written back in place.
//!
//! # Python quirks
//!
//! The files these readers meet are written by Python. What Python's `json`
//! accepts beyond RFC 8259, and what we do with it:
//!
//! | input | Python reads | here |
//! |---|---|---|
//! | `NaN`, `Infinity`, `-Infinity` | the floats | read as the `f64` values ([`Dialect::Python`]) |
//! | integers beyond 64 bits | an exact `int` | read as the nearest `f64`; the raw span keeps every digit, so write-back is exact |
//! | integers of more than 4,300 digits | refused by Python 3.11+ (`sys.set_int_max_str_digits`, a guard against quadratic conversion) | read like other big integers (no conversion happens here, so no such guard is needed); the one place this layer accepts what Python refuses by default |
//! | `1e400` | `inf` | `f64::INFINITY`, raw span kept |
//! | lone surrogate escape `"\ud800"` | a `str` holding the surrogate | U+FFFD in the decoded text (no Rust `str` holds a lone surrogate); the raw span keeps the escape and write-back is exact |
//! | a UTF-8 byte-order mark | refused (`Unexpected UTF-8 BOM`) | refused: [`JsonErrorKind::Bom`]; OC Chat strips it before parsing, as its Python code does |
//! | invalid UTF-8 | refused | refused: [`JsonErrorKind::InvalidUtf8`] |
//!
//! simd-json reads strict JSON; only a document it refuses goes to the
//! fallback parser, so the quirks cost nothing on ordinary input. The
//! fallback builds the very tape and spans simd-json builds, so consumers
//! cannot tell which parser ran (a unit test compares them on every
//! accepted JSONTestSuite case).
//!
//! # Conformance
//!
//! On JSONTestSuite (`tests/it/json/suite.rs`) every `y_` case is accepted;
//! every `n_` case is refused, by the fallback parser alone as well, except
//! `n_number_NaN.json`, `n_number_infinity.json` and
//! `n_number_minus_infinity.json`, which Python reads and which are read as
//! the `f64` values; no `i_` case panics, and each goes as Python's
//! `json.loads` goes on the decoded text: accepted when it is valid UTF-8
//! without a byte-order mark (huge numbers, lone surrogates, 500-deep
//! arrays), refused otherwise (`InvalidUtf8`, `Bom`). Python's own
//! `json.loads(bytes)` would also detect UTF-16 and UTF-32 and strip a BOM;
//! every store read here is UTF-8, so this layer does neither.
//!
//! # Depth
//!
//! Nesting deeper than [`MAX_DEPTH`] is [`JsonErrorKind::TooDeep`], from
//! both parsers (simd-json's own limit, and the fallback's explicit stack),
//! never a stack overflow; nothing in this layer recurses over input.
//! ([`OwnedValue`]'s comparison and writing recurse, over documents this
//! parser made, so at most [`MAX_DEPTH`] deep.) Python's own limit is its
//! recursion limit (1,000 frames by default, so about 997 levels for a
//! top-level `json.loads`): a document nested from there to 1,024 deep is
//! read here but refused (`RecursionError`) by a default Python.
//!
//! # Resource bounds
//!
//! Memory is proportional to the input. Parsing a document of `n` bytes
//! (and asking for spans) holds, besides the caller's bytes:
//!
//! | part | bytes per input byte |
//! |---|---|
//! | the padded copy in the arena | 1 (+64) |
//! | simd-json's structural indexes (4 bytes per structural character) | up to 4 |
//! | simd-json's string buffer | about 1 |
//! | the tape: 24 bytes per value, at most one value per 2 input bytes (`0,`) | up to 12 |
//! | the span table: 8 bytes per value, made on the first span asked for | up to 4 |
//! | growth slack of the tape and span vectors (they double) | up to about 12 |
//!
//! Measured peak heap (`tests/alloc/resources.rs`, a counting allocator, 2 MiB
//! documents): **34 bytes per input byte** for the densest documents (a
//! value every two bytes: `[0,0,…]`, nested `[[0]]`), 22–25 for a member
//! every six bytes or an empty string every three, and 2.6 for text (one
//! long string, escaped or not: the shape of a typical event). A
//! [`Parser`] keeps its buffers for the next document, so after a large one
//! it holds that much until dropped. [`OwnedValue`] costs more: 50 bytes per
//! input byte at worst (every number keeps its text in a `String`).
//!
//! The readers refuse a file over [`MAX_SIZE`](crate::MAX_SIZE) (1 GiB)
//! before reading it; the factor applies below that, so one hostile 1 GiB
//! file of `[0,0,…]` would ask for about 34 GiB. Callers on small machines
//! that read untrusted stores should look at file sizes first (listing
//! opens nothing).
//!
//! Time is linear in the input for parsing, spans and owned values.
//! Decoding a [`json_object!`](crate::json_object) type costs at most
//! (members × declared fields), however often a declared name repeats;
//! [`Map`] equality and lookups used on whole objects are hashed past a
//! few members.

pub(crate) mod block;
mod doc;
mod error;
mod fallback;
pub mod members;
mod owned;
mod value;
pub mod write;

pub(crate) use doc::PooledParser;
pub use doc::{Dialect, Document, Parser, Span};
pub use error::{JsonError, JsonErrorKind};
pub use members::{
    Dict, ElementError, FieldValue, Item, Items, List, Members, Slot, Str, UNDECLARED,
};
pub use owned::{Map, Number, OwnedValue, Style};
pub use value::{Array, Elements, Int, JsonType, Member, MemberIter, Object, Value};

/// The deepest nesting of arrays and objects a document may have (simd-json's
/// own default limit, applied by the fallback parser too).
pub const MAX_DEPTH: usize = 1024;
