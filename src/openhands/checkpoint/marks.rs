//! The conversations' marks of a checkpoint, kept packed in memory: each
//! mark a few hundred bytes (variable-length integers, the stamps of a
//! conversation's files relative to its directory's, digests as 32
//! bytes), unpacked into a [`ConversationMark`] when looked at. A follower
//! holds the checkpoint of every conversation it follows, for as long as
//! it runs: this keeps that smaller than the checkpoint's file.

use super::*;

/// A mark packed (see the [module docs](self)).
type Packed = Box<[u8]>;

/// The conversations' marks, by path relative to the store's root, in
/// path order.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct Marks(BTreeMap<Box<Path>, Packed>);

impl std::fmt::Debug for Marks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Marks {
    /// The mark of the conversation at `rel`.
    pub(crate) fn get(&self, rel: &Path) -> Option<ConversationMark> {
        self.0.get(rel).map(|p| unpack(p))
    }

    /// The depth of the conversation at `rel` (0 for a top-level one),
    /// without unpacking its mark.
    pub(crate) fn depth(&self, rel: &Path) -> Option<usize> {
        self.0.get(rel).map(|p| depth_of(p))
    }

    /// Whether a conversation is recorded at `rel`.
    pub(crate) fn contains_key(&self, rel: &Path) -> bool {
        self.0.contains_key(rel)
    }

    /// Records `mark` at `rel`, over any mark there.
    pub(crate) fn insert(&mut self, rel: PathBuf, mark: &ConversationMark) {
        self.0.insert(rel.into_boxed_path(), pack(mark));
    }

    /// Forgets the mark at `rel`.
    pub(crate) fn remove(&mut self, rel: &Path) {
        self.0.remove(rel);
    }

    /// Moves the mark at `rel` from `self` into `to` (no copy of it is
    /// made); whether there was one.
    pub(crate) fn move_to(&mut self, rel: &Path, to: &mut Marks) -> bool {
        match self.0.remove_entry(rel) {
            Some((k, p)) => {
                to.0.insert(k, p);
                true
            }
            None => false,
        }
    }

    /// Moves every mark into `to` (none is copied).
    pub(crate) fn move_all(&mut self, to: &mut Marks, mut keep: impl FnMut(&Path) -> bool) {
        for (k, p) in std::mem::take(&mut self.0) {
            if keep(&k) {
                self.0.insert(k, p);
            } else {
                to.0.insert(k, p);
            }
        }
    }

    /// The marks, unpacked one at a time, in path order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&Path, ConversationMark)> {
        self.0.iter().map(|(k, p)| (&**k, unpack(p)))
    }

    /// The paths, in order, with each conversation's depth.
    pub(crate) fn depths(&self) -> impl Iterator<Item = (&Path, usize)> {
        self.0.iter().map(|(k, p)| (&**k, depth_of(p)))
    }

    /// The paths, in order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &Path> {
        self.0.keys().map(|k| &**k)
    }

    /// The marks of the conversation at `rel` and of every conversation
    /// recorded under it, in path order.
    pub(crate) fn under<'a>(
        &'a self,
        rel: &'a Path,
    ) -> impl Iterator<Item = (&'a Path, ConversationMark)> + 'a {
        self.0
            .range::<Path, _>((std::ops::Bound::Included(rel), std::ops::Bound::Unbounded))
            .take_while(move |(k, _)| k.starts_with(rel))
            .map(|(k, p)| (&**k, unpack(p)))
    }

    /// How many marks there are.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is none.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<(PathBuf, ConversationMark)> for Marks {
    /// The marks built in bulk (one sort, cheap on marks already in path
    /// order, then no search per mark); a path given twice keeps its last
    /// mark, as inserting each in turn would.
    fn from_iter<I: IntoIterator<Item = (PathBuf, ConversationMark)>>(iter: I) -> Self {
        Marks(
            iter.into_iter()
                .map(|(k, v)| (k.into_boxed_path(), pack(&v)))
                .collect(),
        )
    }
}

// Flags of the optional parts.
const EVENTS_DIR: u8 = 1;
const SUBAGENTS_DIR: u8 = 2;
const LAST: u8 = 4;
const UNSETTLED: u8 = 8;
const GAP: u8 = 16;
const STATE: u8 = 32;
const META: u8 = 64;
const LAST_SHA: u8 = 128;

/// Appends `v` as a little-endian base-128 varint.
fn put_u(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `v` zigzag-encoded (small magnitudes, either sign, short).
fn put_i(out: &mut Vec<u8>, v: i64) {
    put_u(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// A stamp as differences from `base` (the conversation directory's): the
/// files of a conversation share its device, and their inodes and times
/// lie near its.
fn put_stamp(out: &mut Vec<u8>, s: &Stamp, base: &Stamp) {
    put_i(out, s.dev.wrapping_sub(base.dev) as i64);
    put_i(out, s.ino.wrapping_sub(base.ino) as i64);
    put_u(out, s.size);
    put_i(out, s.mtime.wrapping_sub(base.mtime));
    put_u(out, u64::from(s.mtime_nsec));
    // The change time relative to the stamp's own modification time (most
    // often equal or near); nanoseconds plus one, 0 for none recorded.
    match s.ctime {
        Some((c, n)) => {
            put_i(out, c.wrapping_sub(s.mtime));
            put_u(out, u64::from(n) + 1);
        }
        None => {
            put_i(out, 0);
            put_u(out, 0);
        }
    }
}

fn put_file(out: &mut Vec<u8>, f: &FileMark, base: &Stamp) {
    put_u(out, f.index);
    put_str(out, &f.name);
    put_stamp(out, &f.stamp, base);
}

/// `m` packed.
fn pack(m: &ConversationMark) -> Packed {
    let mut out = Vec::with_capacity(256);
    put_u(&mut out, m.depth as u64);
    let flag = |on: bool, f: u8| if on { f } else { 0 };
    out.push(
        flag(m.events_dir.is_some(), EVENTS_DIR)
            | flag(m.subagents_dir.is_some(), SUBAGENTS_DIR)
            | flag(m.last.is_some(), LAST)
            | flag(m.unsettled, UNSETTLED)
            | flag(m.gap.is_some(), GAP)
            | flag(m.state.is_some(), STATE)
            | flag(m.meta.is_some(), META)
            | flag(m.last_sha256.is_some(), LAST_SHA),
    );
    let zero = Stamp::default();
    put_stamp(&mut out, &m.dir, &zero);
    for s in [&m.events_dir, &m.subagents_dir].into_iter().flatten() {
        put_stamp(&mut out, s, &m.dir);
    }
    put_u(&mut out, m.next);
    if let Some(f) = &m.last {
        put_file(&mut out, f, &m.dir);
    }
    if let Some(d) = &m.last_sha256 {
        out.extend_from_slice(d);
    }
    out.extend_from_slice(&m.names);
    put_u(&mut out, m.retry.len() as u64);
    for f in &m.retry {
        put_file(&mut out, f, &m.dir);
    }
    put_u(&mut out, m.subagents.len() as u64);
    for s in &m.subagents {
        put_str(&mut out, s);
    }
    if let Some(g) = m.gap {
        put_u(&mut out, g);
    }
    for j in [&m.state, &m.meta].into_iter().flatten() {
        put_stamp(&mut out, &j.stamp, &m.dir);
        out.extend_from_slice(&j.sha256);
    }
    put_str(&mut out, &m.id);
    // Last, after a byte: older marks had none.
    if let Some(d) = &m.stamps {
        out.push(1);
        out.extend_from_slice(d);
    }
    out.into_boxed_slice()
}

/// Reads what [`pack`] wrote. The bytes are only ever ours; should they
/// run short, what is missing reads as zeros (never a panic).
struct Unpack<'a>(&'a [u8]);

impl Unpack<'_> {
    fn byte(&mut self) -> u8 {
        let (b, rest) = self.0.split_first().map_or((0, &[][..]), |(b, r)| (*b, r));
        self.0 = rest;
        b
    }

    fn u(&mut self) -> u64 {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte();
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
        }
        v
    }

    fn i(&mut self) -> i64 {
        let u = self.u();
        ((u >> 1) as i64) ^ -((u & 1) as i64)
    }

    fn bytes(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (b, rest) = self.0.split_at(n);
        self.0 = rest;
        b
    }

    fn string(&mut self) -> String {
        let n = usize::try_from(self.u()).unwrap_or(usize::MAX);
        String::from_utf8_lossy(self.bytes(n)).into_owned()
    }

    fn digest(&mut self) -> [u8; 32] {
        let mut d = [0; 32];
        let b = self.bytes(32);
        d[..b.len()].copy_from_slice(b);
        d
    }

    fn stamp(&mut self, base: &Stamp) -> Stamp {
        let dev = base.dev.wrapping_add(self.i() as u64);
        let ino = base.ino.wrapping_add(self.i() as u64);
        let size = self.u();
        let mtime = base.mtime.wrapping_add(self.i());
        let mtime_nsec = u32::try_from(self.u()).unwrap_or(0);
        let c = mtime.wrapping_add(self.i());
        let n = self.u();
        Stamp {
            dev,
            ino,
            size,
            mtime,
            mtime_nsec,
            ctime: (n > 0).then(|| (c, u32::try_from(n - 1).unwrap_or(0))),
        }
    }

    fn file(&mut self, base: &Stamp) -> FileMark {
        FileMark {
            index: self.u(),
            name: self.string(),
            stamp: self.stamp(base),
        }
    }
}

fn depth_of(p: &[u8]) -> usize {
    usize::try_from(Unpack(p).u()).unwrap_or(usize::MAX)
}

/// The mark `p` packs.
fn unpack(p: &[u8]) -> ConversationMark {
    let mut r = Unpack(p);
    let depth = usize::try_from(r.u()).unwrap_or(usize::MAX);
    let flags = r.byte();
    let on = |f: u8| flags & f != 0;
    let dir = r.stamp(&Stamp::default());
    let events_dir = on(EVENTS_DIR).then(|| r.stamp(&dir));
    let subagents_dir = on(SUBAGENTS_DIR).then(|| r.stamp(&dir));
    let next = r.u();
    let last = on(LAST).then(|| r.file(&dir));
    let last_sha256 = on(LAST_SHA).then(|| r.digest());
    let names = r.digest();
    let n = r.u();
    let retry = (0..n).map_while(|_| (!r.0.is_empty()).then(|| r.file(&dir)));
    let retry = retry.collect();
    let n = r.u();
    let subagents = (0..n).map_while(|_| (!r.0.is_empty()).then(|| r.string()));
    let subagents = subagents.collect();
    let gap = on(GAP).then(|| r.u());
    let mut json = |f: u8| {
        on(f).then(|| JsonMark {
            stamp: r.stamp(&dir),
            sha256: r.digest(),
        })
    };
    let state = json(STATE);
    let meta = json(META);
    let id = r.string();
    let stamps = (r.byte() == 1).then(|| r.digest());
    ConversationMark {
        id,
        stamps,
        depth,
        dir,
        events_dir,
        subagents_dir,
        subagents,
        next,
        last,
        last_sha256,
        names,
        retry,
        unsettled: on(UNSETTLED),
        gap,
        state,
        meta,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(dev: u64, ino: u64, size: u64, mtime: i64, nsec: u32) -> Stamp {
        Stamp {
            dev,
            ino,
            size,
            mtime,
            mtime_nsec: nsec,
            ctime: nsec
                .is_multiple_of(2)
                .then_some((mtime.wrapping_add(7), nsec)),
        }
    }

    #[test]
    fn packs_and_unpacks_every_part() {
        let dir = stamp(64769, 1 << 40, 4096, 1_764_720_000, 999_999_999);
        let far = stamp(0, u64::MAX, u64::MAX, i64::MIN, 0);
        let file = |index, name: &str, s| FileMark {
            index,
            name: name.into(),
            stamp: s,
        };
        let full = ConversationMark {
            id: "0123456789abcdef0123456789abcdef".into(),
            depth: 2,
            dir,
            events_dir: Some(far),
            subagents_dir: Some(stamp(1, 2, 3, i64::MAX, 4)),
            subagents: vec!["a".into(), "ünï".into()],
            next: u64::MAX,
            last: Some(file(7, "event-00007-x.json", dir)),
            last_sha256: Some([9; 32]),
            names: [7; 32],
            retry: vec![file(1, "e1", far), file(3, "", dir)],
            stamps: Some([3; 32]),
            unsettled: true,
            gap: Some(0),
            state: Some(JsonMark {
                stamp: far,
                sha256: [1; 32],
            }),
            meta: Some(JsonMark {
                stamp: dir,
                sha256: [255; 32],
            }),
        };
        for m in [full, ConversationMark::default()] {
            let p = pack(&m);
            assert_eq!(unpack(&p), m);
            assert_eq!(depth_of(&p), m.depth);
            // Cut short anywhere: no panic.
            for n in 0..p.len() {
                let _ = unpack(&p[..n]);
            }
        }
    }

    #[test]
    fn a_map_of_marks() {
        let mut a = Marks::default();
        let m = |depth| ConversationMark {
            depth,
            ..ConversationMark::default()
        };
        a.insert("x".into(), &m(0));
        a.insert("x/subagents/y".into(), &m(1));
        a.insert("xy".into(), &m(0));
        let under: Vec<_> = a.under(Path::new("x")).map(|(k, _)| k).collect();
        assert_eq!(under, [Path::new("x"), Path::new("x/subagents/y")]);
        assert_eq!(a.depth(Path::new("x/subagents/y")), Some(1));
        let mut b = Marks::default();
        assert!(a.move_to(Path::new("xy"), &mut b));
        assert!(!a.move_to(Path::new("xy"), &mut b));
        assert_eq!((a.len(), b.len()), (2, 1));
        a.move_all(&mut b, |k| k == Path::new("x"));
        assert_eq!((a.len(), b.len()), (1, 2));
    }
}
