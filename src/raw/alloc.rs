//! Fallible boxes and boxed slices, and the one error every structure of
//! `raw` answers when memory runs out.

/// Memory could not be allocated (or a structure reached the most it can
/// address). Whatever refused with it is unchanged, unless its doc says
/// otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AllocError;

/// `value` on the heap, or `None` if the allocation fails.
pub(crate) fn try_box<T>(value: T) -> Option<Box<T>> {
    #[cfg(test)]
    if refusals::refused() {
        return None;
    }
    let mut one = Vec::new();
    one.try_reserve_exact(1).ok()?;
    one.push(value);
    let raw = Box::into_raw(one.into_boxed_slice()).cast::<T>();
    // SAFETY: a boxed one-element slice has the layout of `T`; ownership
    // moves from the slice's box to this one.
    Some(unsafe { Box::from_raw(raw) })
}

/// `len` values made by `make` in one heap block, or `None` if the
/// allocation fails.
pub(crate) fn try_boxed_slice<T>(len: usize, make: impl FnMut() -> T) -> Option<Box<[T]>> {
    #[cfg(test)]
    if refusals::refused() {
        return None;
    }
    let mut values = Vec::new();
    values.try_reserve_exact(len).ok()?;
    values.extend(core::iter::repeat_with(make).take(len));
    Some(values.into_boxed_slice())
}

/// Unit tests' fault injection: [`try_box`] and [`try_boxed_slice`] on this
/// thread fail while armed.
#[cfg(test)]
pub(crate) mod refusals {
    use std::cell::Cell;

    std::thread_local! {
        static ARMED: Cell<bool> = const { Cell::new(false) };
        static REFUSED: Cell<usize> = const { Cell::new(0) };
    }

    /// Makes every `try_box` and `try_boxed_slice` on this thread fail
    /// until [`disarm`].
    pub(crate) fn arm() {
        ARMED.with(|a| a.set(true));
    }

    /// Ends [`arm`].
    pub(crate) fn disarm() {
        ARMED.with(|a| a.set(false));
    }

    /// The allocations refused on this thread so far: a test arms, runs
    /// what must allocate nothing, and checks that this did not grow.
    pub(crate) fn count() -> usize {
        REFUSED.with(Cell::get)
    }

    pub(super) fn refused() -> bool {
        let armed = ARMED.with(Cell::get);
        REFUSED.with(|refused| refused.set(refused.get() + usize::from(armed)));
        armed
    }
}
