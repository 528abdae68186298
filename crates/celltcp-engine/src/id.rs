//! Typed index handles into arenas, in the manner of smoltcp's `SocketHandle`: components refer to
//! each other by `Id<T>`, never by shared pointers.

use std::fmt;
use std::marker::PhantomData;

/// A handle to a `T` stored in an [`Arena<T>`].
pub struct Id<T> {
    index: u32,
    _marker: PhantomData<fn() -> T>,
}

impl<T> Id<T> {
    pub const fn new(index: u32) -> Self {
        Id { index, _marker: PhantomData }
    }
    pub const fn index(self) -> usize {
        self.index as usize
    }
    pub const fn raw(self) -> u32 {
        self.index
    }
}

impl<T> Clone for Id<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Id<T> {}
impl<T> PartialEq for Id<T> {
    fn eq(&self, o: &Self) -> bool {
        self.index == o.index
    }
}
impl<T> Eq for Id<T> {}
impl<T> PartialOrd for Id<T> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Id<T> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.index.cmp(&o.index)
    }
}
impl<T> std::hash::Hash for Id<T> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.index.hash(h)
    }
}
impl<T> fmt::Debug for Id<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.index)
    }
}

/// Dense storage addressed by [`Id`]. Items are never removed during a run, so handles stay valid.
pub struct Arena<T> {
    items: Vec<T>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { items: Vec::new() }
    }
}

impl<T> Arena<T> {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn push(&mut self, item: T) -> Id<T> {
        let id = Id::new(u32::try_from(self.items.len()).expect("arena overflow"));
        self.items.push(item);
        id
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = (Id<T>, &T)> {
        self.items.iter().enumerate().map(|(i, t)| (Id::new(i as u32), t))
    }
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Id<T>, &mut T)> {
        self.items.iter_mut().enumerate().map(|(i, t)| (Id::new(i as u32), t))
    }
    pub fn values(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }
}

impl<T> std::ops::Index<Id<T>> for Arena<T> {
    type Output = T;
    fn index(&self, id: Id<T>) -> &T {
        &self.items[id.index()]
    }
}
impl<T> std::ops::IndexMut<Id<T>> for Arena<T> {
    fn index_mut(&mut self, id: Id<T>) -> &mut T {
        &mut self.items[id.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_index_their_items() {
        let mut a = Arena::new();
        let x = a.push("x");
        let y = a.push("y");
        assert_eq!(a[x], "x");
        assert_eq!(a[y], "y");
        assert_ne!(x, y);
        a[y] = "z";
        assert_eq!(a.iter().map(|(_, v)| *v).collect::<Vec<_>>(), vec!["x", "z"]);
    }
}
