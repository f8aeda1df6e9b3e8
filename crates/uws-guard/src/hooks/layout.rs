//! The layout check that keeps the guard off a uWS build it does not know: where a socket
//! context holds uWS's callbacks, read from a copy of the context's first words.

/// How many words at the start of a context the layout check reads: uSockets keeps its
/// callbacks among the first dozen (a loop pointer and a few fields come first).
pub(super) const CONTEXT_WORDS: usize = 16;

/// What a context's callbacks are: uWS's own (`data`, with `close` two slots later, as
/// uSockets lays out on_open, on_data, on_writable, on_close), already the guard's, or
/// something else (another build: refuse).
#[derive(Debug, PartialEq)]
pub(super) enum Seat {
    Original,
    Guarded,
    Unknown,
}

/// The word at which a context holds uWS's `on_data` with its `on_close` two words later.
pub(super) fn data_slot(words: &[usize; CONTEXT_WORDS], data: usize, close: usize) -> Option<usize> {
    (0..CONTEXT_WORDS - 2).find(|&i| words[i] == data && words[i + 2] == close)
}

/// The layout check: what `words` (a context's first words) hold at `at`.
pub(super) fn classify(
    words: &[usize; CONTEXT_WORDS],
    at: Option<usize>,
    data: usize,
    close: usize,
    guard: usize,
) -> Seat {
    let Some(at) = at.filter(|&at| at + 2 < CONTEXT_WORDS) else { return Seat::Unknown };
    match words[at] {
        d if d == data && words[at + 2] == close => Seat::Original,
        d if d == guard => Seat::Guarded,
        _ => Seat::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATA: usize = 0x1000;
    const CLOSE: usize = 0x3000;
    const GUARD: usize = 0x9000;

    /// A context's first words with uWS's callbacks at `at` (on_open, on_data, on_writable, on_close).
    fn context(at: usize) -> [usize; CONTEXT_WORDS] {
        let mut words = [0usize; CONTEXT_WORDS];
        words.iter_mut().enumerate().for_each(|(i, w)| *w = 0x10 + i);
        words[at] = DATA;
        words[at + 1] = 0x2000;
        words[at + 2] = CLOSE;
        words
    }

    #[test]
    fn finds_uws_callbacks_wherever_the_build_keeps_them() {
        for at in [0, 3, 7, CONTEXT_WORDS - 3] {
            let words = context(at);
            assert_eq!(data_slot(&words, DATA, CLOSE), Some(at));
            assert_eq!(classify(&words, Some(at), DATA, CLOSE, GUARD), Seat::Original);
        }
    }

    #[test]
    fn a_guarded_context_is_recognised_and_not_guarded_twice() {
        let mut words = context(4);
        words[4] = GUARD;
        assert_eq!(classify(&words, Some(4), DATA, CLOSE, GUARD), Seat::Guarded);
    }

    #[test]
    fn another_layout_is_refused() {
        // on_close not two words after on_data (another uSockets layout).
        let mut words = context(4);
        words[6] = 0x4000;
        assert_eq!(data_slot(&words, DATA, CLOSE), None);
        assert_eq!(classify(&words, None, DATA, CLOSE, GUARD), Seat::Unknown);
        // The slot found on the first context holds something else in this one.
        let other = context(2);
        assert_eq!(classify(&other, Some(4), DATA, CLOSE, GUARD), Seat::Unknown);
        // A callback of neither uWS nor the guard.
        let mut foreign = context(4);
        foreign[4] = 0x5000;
        assert_eq!(classify(&foreign, Some(4), DATA, CLOSE, GUARD), Seat::Unknown);
        // No slot past the words read.
        assert_eq!(classify(&context(4), Some(CONTEXT_WORDS - 2), DATA, CLOSE, GUARD), Seat::Unknown);
    }
}
