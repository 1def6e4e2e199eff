//! A small least-recently-used cache keyed by string, used to keep parsed documents in memory.

use std::collections::HashMap;
use std::hash::Hash;

/// A node in the intrusive recency list.
#[derive(Debug)]
struct Node<K, V> {
    key: K,
    value: V,
    prev: Option<usize>,
    next: Option<usize>,
}

/// Least-recently-used cache with a fixed capacity.
#[derive(Debug)]
pub struct LruCache<K, V> {
    capacity: usize,
    index: HashMap<K, usize>,
    nodes: Vec<Node<K, V>>,
    head: Option<usize>,
    tail: Option<usize>,
}

impl<K: Clone + Eq + Hash, V> LruCache<K, V> {
    /// Creates an empty cache holding at most `capacity` entries (at least one).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            index: HashMap::with_capacity(capacity),
            nodes: Vec::with_capacity(capacity),
            head: None,
            tail: None,
        }
    }

    /// Returns the value for `key` and marks it as most recently used.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        let slot = *self.index.get(key)?;
        self.detach(slot);
        self.push_front(slot);
        Some(&self.nodes[slot].value)
    }

    /// Inserts or replaces a value, evicting the least recently used entry when full.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        if let Some(&slot) = self.index.get(&key) {
            self.detach(slot);
            self.push_front(slot);
            return Some(std::mem::replace(&mut self.nodes[slot].value, value));
        }
        if self.nodes.len() < self.capacity {
            let slot = self.nodes.len();
            self.nodes.push(Node { key: key.clone(), value, prev: None, next: None });
            self.index.insert(key, slot);
            self.push_front(slot);
            return None;
        }
        let slot = self.tail?;
        self.detach(slot);
        let old_key = std::mem::replace(&mut self.nodes[slot].key, key.clone());
        self.index.remove(&old_key);
        self.index.insert(key, slot);
        let old = std::mem::replace(&mut self.nodes[slot].value, value);
        self.push_front(slot);
        Some(old)
    }

    fn detach(&mut self, slot: usize) {
        let (prev, next) = (self.nodes[slot].prev, self.nodes[slot].next);
        match prev {
            Some(p) => self.nodes[p].next = next,
            None => self.head = next,
        }
        match next {
            Some(n) => self.nodes[n].prev = prev,
            None => self.tail = prev,
        }
        self.nodes[slot].prev = None;
        self.nodes[slot].next = None;
    }

    fn push_front(&mut self, slot: usize) {
        self.nodes[slot].next = self.head;
        if let Some(h) = self.head {
            self.nodes[h].prev = Some(slot);
        }
        self.head = Some(slot);
        if self.tail.is_none() {
            self.tail = Some(slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_the_least_recently_used_entry() {
        let mut cache = LruCache::new(2);
        cache.insert("a".to_string(), 1);
        cache.insert("b".to_string(), 2);
        assert_eq!(cache.get(&"a".to_string()), Some(&1));
        cache.insert("c".to_string(), 3);
        assert_eq!(cache.get(&"b".to_string()), None);
        assert_eq!(cache.get(&"c".to_string()), Some(&3));
    }
}
