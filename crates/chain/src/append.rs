//! `AppendList`: an immutable list that grows by sharing. Each version is its buffer and a
//! length; appending to the newest version writes past every reader's length into the same
//! buffer (room doubling when full), so a new version costs what it adds, not what it
//! holds, and it still reads as one slice. Pre-confirmations publish the block being built
//! this way: every tick a new version, readers holding older ones undisturbed.

use std::cell::UnsafeCell;
use std::fmt;
use std::mem::MaybeUninit;
use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

struct Buffer<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    /// Slots `..filled` hold values and never change again; only the appender holding
    /// `append` writes, and only at `filled`.
    filled: AtomicUsize,
    append: Mutex<()>,
}

// Safety: a slot is written once, by the one appender holding `append`, before `filled`
// moves past it (Release); readers only look below a length they got from a version made
// after that store (Acquire, or through whatever handed them the version). A value read
// from several threads must itself be Sync; one dropped on another thread, Send.
unsafe impl<T: Send + Sync> Sync for Buffer<T> {}
unsafe impl<T: Send + Sync> Send for Buffer<T> {}

impl<T> Buffer<T> {
    fn with_room(room: usize) -> Self {
        let slots = (0..room).map(|_| UnsafeCell::new(MaybeUninit::uninit())).collect();
        Self { slots, filled: AtomicUsize::new(0), append: Mutex::new(()) }
    }

    /// Writes `values` at `filled` onward; the caller holds `append` and checked the room.
    fn write(&self, values: impl Iterator<Item = T>) {
        let mut filled = self.filled.load(Ordering::Acquire);
        for v in values {
            // Safety: slot `filled` is past every version's length (see `Buffer`).
            unsafe { (*self.slots[filled].get()).write(v) };
            filled += 1;
        }
        self.filled.store(filled, Ordering::Release);
    }
}

impl<T> Drop for Buffer<T> {
    fn drop(&mut self) {
        let filled = *self.filled.get_mut();
        for slot in &mut self.slots[..filled] {
            // Safety: slots below `filled` were written and are dropped once, here.
            unsafe { slot.get_mut().assume_init_drop() };
        }
    }
}

/// One version of a list; cloning it is cheap (a shared buffer and a length).
pub struct AppendList<T> {
    buffer: Arc<Buffer<T>>,
    len: usize,
}

impl<T: Clone + Send + Sync> AppendList<T> {
    /// This list with `more` after it. Appending to the newest version is amortised
    /// O(`more`); appending to an older one copies it first (the newer values stay theirs).
    pub fn appended(&self, more: &[T]) -> Self {
        if more.is_empty() {
            return self.clone();
        }
        {
            let _writer = self.buffer.append.lock();
            let filled = self.buffer.filled.load(Ordering::Acquire);
            if filled == self.len && filled + more.len() <= self.buffer.slots.len() {
                self.buffer.write(more.iter().cloned());
                return Self { buffer: self.buffer.clone(), len: filled + more.len() };
            }
        }
        let len = self.len + more.len();
        let buffer = Buffer::with_room(len.max(8).next_power_of_two().max(2 * self.len));
        buffer.write(self.iter().cloned().chain(more.iter().cloned()));
        Self { buffer: Arc::new(buffer), len }
    }
}

impl<T> AppendList<T> {
    /// Whether `older` is a version this one grew from: the same buffer, no longer. Its
    /// values are then this list's first ones (a buffer's written slots never change), so
    /// whatever was derived from them still holds.
    pub fn extends(&self, older: &Self) -> bool {
        Arc::ptr_eq(&self.buffer, &older.buffer) && older.len <= self.len
    }
}

impl<T> Deref for AppendList<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // Safety: the first `len` slots are written and immutable (see `Buffer`), and
        // `UnsafeCell<MaybeUninit<T>>` has the layout of `T`.
        unsafe { std::slice::from_raw_parts(self.buffer.slots.as_ptr().cast::<T>(), self.len) }
    }
}

impl<T> Clone for AppendList<T> {
    fn clone(&self) -> Self {
        Self { buffer: self.buffer.clone(), len: self.len }
    }
}

impl<T> Default for AppendList<T> {
    fn default() -> Self {
        Self { buffer: Arc::new(Buffer::with_room(0)), len: 0 }
    }
}

impl<T> From<Vec<T>> for AppendList<T> {
    fn from(values: Vec<T>) -> Self {
        let len = values.len();
        let buffer = Buffer::with_room(len);
        buffer.write(values.into_iter());
        Self { buffer: Arc::new(buffer), len }
    }
}

impl<T> FromIterator<T> for AppendList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        iter.into_iter().collect::<Vec<_>>().into()
    }
}

impl<'a, T> IntoIterator for &'a AppendList<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: fmt::Debug> fmt::Debug for AppendList<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_keep_their_length_while_the_newest_grows_in_place() {
        let a = AppendList::from(vec![1, 2]);
        let b = a.appended(&[3]);
        let c = b.appended(&[4, 5]);
        assert_eq!((&*a, &*b, &*c), (&[1, 2][..], &[1, 2, 3][..], &[1, 2, 3, 4, 5][..]));
        // b and c share one buffer (room for 8): no copy per version.
        assert!(Arc::ptr_eq(&b.buffer, &c.buffer));
    }

    #[test]
    fn appending_to_an_older_version_forks_it() {
        let base = AppendList::<u32>::default().appended(&[1]);
        let newer = base.appended(&[2]);
        let fork = base.appended(&[9]);
        assert_eq!((&*newer, &*fork), (&[1, 2][..], &[1, 9][..]));
        assert!(newer.extends(&base) && newer.extends(&newer) && !base.extends(&newer));
        assert!(!fork.extends(&newer) && !newer.extends(&fork), "a fork shares no buffer with the other branch");
    }

    #[test]
    fn growing_past_the_room_moves_to_a_bigger_buffer_and_drops_each_value_once() {
        let value = Arc::new(());
        let mut list = AppendList::default();
        let mut versions = Vec::new();
        for _ in 0..100 {
            list = list.appended(std::slice::from_ref(&value));
            versions.push(list.clone());
        }
        assert_eq!(versions.iter().map(|v| v.len()).collect::<Vec<_>>(), (1..=100).collect::<Vec<_>>());
        drop((list, versions));
        assert_eq!(Arc::strong_count(&value), 1);
    }

    #[test]
    fn readers_on_other_threads_see_whole_versions() {
        let list = Arc::new(Mutex::new(AppendList::<u64>::default()));
        let reader = {
            let list = list.clone();
            std::thread::spawn(move || {
                for _ in 0..2_000 {
                    let v = list.lock().clone();
                    assert!(v.iter().enumerate().all(|(i, x)| *x == i as u64));
                }
            })
        };
        for i in 0..2_000u64 {
            let next = list.lock().appended(&[i]);
            *list.lock() = next;
        }
        reader.join().unwrap();
    }
}
