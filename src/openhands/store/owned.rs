//! [`Store::conversations`]: the store's conversations as an [`Iterator`]
//! of owned items, for `for` loops and iterator adapters.

use std::path::PathBuf;

use super::{Store, StoreError, StreamCursor};
use crate::openhands::Conversation;

/// One conversation of a store, owned ([`Store::conversations`]).
#[derive(Debug)]
pub struct StoreConversation {
    /// The conversation as read.
    pub conversation: Conversation,
    /// For a sub-agent's conversation, the directory of the conversation
    /// whose `subagents/` holds it.
    pub parent: Option<PathBuf>,
    /// 0 for a top-level conversation, 1 for its sub-agents, 2 for theirs…
    pub depth: usize,
}

/// The conversations of a [`Store`] as an [`Iterator`]
/// ([`Store::conversations`]): the items of [`Store::stream`], in the same
/// order, each conversation moved out to the caller.
#[derive(Debug)]
pub struct Conversations<'s> {
    dirs: &'s [PathBuf],
    next: usize,
    cursor: StreamCursor,
}

impl Store {
    /// The conversations (sub-agents included, right after their parent)
    /// as an [`Iterator`] of owned items, in the order of
    /// [`stream`](Self::stream). Each item owns its conversation, so the
    /// buffers are not reused from one to the next as the stream's are:
    /// `stream` is the way to read a large store with memory bounded by its
    /// largest conversation; this one is for `for` loops and adapters.
    ///
    /// ```no_run
    /// let store = agentlog::openhands::Store::open("conversations")?;
    /// let events: usize = store
    ///     .conversations()
    ///     .filter_map(Result::ok)
    ///     .map(|c| c.conversation.len())
    ///     .sum();
    /// # Ok::<(), agentlog::openhands::ReadError>(())
    /// ```
    pub fn conversations(&self) -> Conversations<'_> {
        Conversations {
            dirs: &self.dirs,
            next: 0,
            cursor: StreamCursor::new(self.pattern),
        }
    }
}

impl Iterator for Conversations<'_> {
    type Item = Result<StoreConversation, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        let (parent, depth) =
            match self
                .cursor
                .advance(self.dirs, &mut self.next, &mut |_, _| {})?
            {
                Ok(item) => (item.parent.map(PathBuf::from), item.depth),
                Err(e) => return Some(Err(e)),
            };
        let conversation = std::mem::take(&mut self.cursor.conv);
        Some(Ok(StoreConversation {
            conversation,
            parent,
            depth,
        }))
    }
}

impl<'s> IntoIterator for &'s Store {
    type Item = Result<StoreConversation, StoreError>;
    type IntoIter = Conversations<'s>;

    fn into_iter(self) -> Conversations<'s> {
        self.conversations()
    }
}
