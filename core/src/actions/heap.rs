//! A priority queue that orders exactly as Volcano's (`util.PriorityQueue` over Go's
//! `container/heap`): the same sift-up/sift-down steps with the same "less" function, so ties
//! and stale keys resolve as Volcano resolves them for the same push order.

/// A binary min-heap of `T` ordered by a caller-supplied `less(a, b)` ("a before b").
#[derive(Debug, Clone)]
pub struct GoHeap<T> {
    items: Vec<T>,
}

impl<T: Copy> Default for GoHeap<T> {
    fn default() -> Self {
        GoHeap { items: Vec::new() }
    }
}

impl<T: Copy> GoHeap<T> {
    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the heap is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Pushes `x` (Go `heap.Push`: append, then sift up).
    pub fn push(&mut self, x: T, less: &mut impl FnMut(T, T) -> bool) {
        self.items.push(x);
        let mut j = self.items.len() - 1;
        while j > 0 {
            let i = (j - 1) / 2;
            if !less(self.items[j], self.items[i]) {
                break;
            }
            self.items.swap(i, j);
            j = i;
        }
    }

    /// Pops the first item (Go `heap.Pop`: swap root and last, sift down, remove last).
    pub fn pop(&mut self, less: &mut impl FnMut(T, T) -> bool) -> Option<T> {
        let n = self.items.len();
        if n == 0 {
            return None;
        }
        self.items.swap(0, n - 1);
        let n = n - 1;
        let mut i = 0;
        loop {
            let j1 = 2 * i + 1;
            if j1 >= n {
                break;
            }
            let mut j = j1;
            let j2 = j1 + 1;
            if j2 < n && less(self.items[j2], self.items[j1]) {
                j = j2;
            }
            if !less(self.items[j], self.items[i]) {
                break;
            }
            self.items.swap(i, j);
            i = j;
        }
        self.items.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_order() {
        let mut h = GoHeap::default();
        let mut less = |a: i32, b: i32| a < b;
        for x in [5, 1, 4, 2, 3, 0] {
            h.push(x, &mut less);
        }
        let out: Vec<i32> = std::iter::from_fn(|| h.pop(&mut less)).collect();
        assert_eq!(out, vec![0, 1, 2, 3, 4, 5]);
    }
}
