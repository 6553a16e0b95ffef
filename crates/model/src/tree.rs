use crate::Entry;
// foldhash: a fast hash with a random seed per process (ids come from
// files, which may be hostile).
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

/// A read-only index over a session's entries for tree walks.
///
/// Entries whose parent is missing, `None`, or themselves are roots. Walks
/// are iterative and stop on cycles, so a malformed file cannot hang or
/// overflow the stack.
pub struct Tree<'a> {
    entries: &'a [Entry],
    by_id: HashMap<&'a str, usize>,
    children: HashMap<&'a str, Vec<usize>>,
    roots: Vec<usize>,
}

/// A node of [`Tree::nodes`]: an entry and its depth below its root.
#[derive(Debug, Clone, Copy)]
pub struct TreeNode<'a> {
    /// The entry.
    pub entry: &'a Entry,
    /// 0 for roots.
    pub depth: usize,
    /// True when this entry's parent has more than one child.
    pub is_branch: bool,
}

impl<'a> Tree<'a> {
    /// Builds the index; when ids repeat, the last entry with an id wins.
    pub fn new(entries: &'a [Entry]) -> Tree<'a> {
        let mut by_id = HashMap::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            by_id.insert(e.id.as_str(), i);
        }
        let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut roots = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            if by_id.get(e.id.as_str()) != Some(&i) {
                continue; // shadowed duplicate
            }
            match e.parent_id.as_deref() {
                Some(p) if p != e.id && by_id.contains_key(p) => {
                    children.entry(p).or_default().push(i)
                }
                _ => roots.push(i),
            }
        }
        Tree {
            entries,
            by_id,
            children,
            roots,
        }
    }

    /// Returns the entry with `id`.
    pub fn get(&self, id: &str) -> Option<&'a Entry> {
        self.by_id.get(id).map(|&i| &self.entries[i])
    }

    /// Returns the roots, in file order.
    pub fn roots(&self) -> Vec<&'a Entry> {
        self.roots.iter().map(|&i| &self.entries[i]).collect()
    }

    /// Returns the direct children of `id`, in file order.
    pub fn children(&self, id: &str) -> Vec<&'a Entry> {
        self.children
            .get(id)
            .map(|v| v.iter().map(|&i| &self.entries[i]).collect())
            .unwrap_or_default()
    }

    /// Returns the entries from the root down to `id` (empty when unknown).
    pub fn path_to_root(&self, id: &str) -> Vec<&'a Entry> {
        let mut path = Vec::new();
        let mut seen = HashSet::new();
        let mut cur = self.get(id);
        while let Some(e) = cur {
            if !seen.insert(e.id.as_str()) {
                break;
            }
            path.push(e);
            cur = match e.parent_id.as_deref() {
                Some(p) if p != e.id => self.get(p),
                _ => None,
            };
        }
        path.reverse();
        path
    }

    /// Returns the entries that have more than one child.
    pub fn branch_points(&self) -> Vec<&'a Entry> {
        let mut points: Vec<usize> = self
            .children
            .iter()
            .filter(|(_, c)| c.len() > 1)
            .filter_map(|(id, _)| self.by_id.get(id).copied())
            .collect();
        points.sort_unstable();
        points.into_iter().map(|i| &self.entries[i]).collect()
    }

    /// Returns the leaves (entries with no children), in file order.
    pub fn leaves(&self) -> Vec<&'a Entry> {
        let mut out = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            if self.by_id.get(e.id.as_str()) == Some(&i)
                && !self.children.contains_key(e.id.as_str())
            {
                out.push(e);
            }
        }
        out
    }

    /// Returns every entry depth-first from the roots, children in file
    /// order, with depths; entries unreachable because of cycles come last.
    pub fn nodes(&self) -> Vec<TreeNode<'a>> {
        let mut out = Vec::with_capacity(self.entries.len());
        let mut visited = vec![false; self.entries.len()];
        let mut stack: Vec<(usize, usize, bool)> = self
            .roots
            .iter()
            .rev()
            .map(|&i| (i, 0, self.roots.len() > 1))
            .collect();
        while let Some((i, depth, is_branch)) = stack.pop() {
            if visited[i] {
                continue;
            }
            visited[i] = true;
            let entry = &self.entries[i];
            out.push(TreeNode {
                entry,
                depth,
                is_branch,
            });
            if let Some(kids) = self.children.get(entry.id.as_str()) {
                let branch = kids.len() > 1;
                for &k in kids.iter().rev() {
                    stack.push((k, depth + 1, branch));
                }
            }
        }
        for (i, entry) in self.entries.iter().enumerate() {
            if !visited[i] && self.by_id.get(entry.id.as_str()) == Some(&i) {
                out.push(TreeNode {
                    entry,
                    depth: 0,
                    is_branch: false,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EntryKind, Message, Role};

    fn e(id: &str, parent: Option<&str>) -> Entry {
        Entry::new(
            id,
            parent.map(String::from),
            EntryKind::Message(Message::text(Role::User, id)),
        )
    }

    fn ids(v: &[&Entry]) -> Vec<String> {
        v.iter().map(|e| e.id.clone()).collect()
    }

    #[test]
    fn walks_a_branching_tree() {
        let entries = vec![
            e("a", None),
            e("b", Some("a")),
            e("c", Some("b")),
            e("d", Some("b")),
            e("x", Some("gone")),
        ];
        let t = Tree::new(&entries);
        assert_eq!(ids(&t.path_to_root("d")), ["a", "b", "d"]);
        assert_eq!(ids(&t.children("b")), ["c", "d"]);
        assert_eq!(ids(&t.branch_points()), ["b"]);
        assert_eq!(ids(&t.roots()), ["a", "x"]);
        assert_eq!(ids(&t.leaves()), ["c", "d", "x"]);
        let depths: Vec<usize> = t.nodes().iter().map(|n| n.depth).collect();
        assert_eq!(depths, [0, 1, 2, 2, 0]);
    }

    #[test]
    fn cycles_do_not_hang() {
        let entries = vec![e("a", Some("b")), e("b", Some("a")), e("s", Some("s"))];
        let t = Tree::new(&entries);
        assert_eq!(t.path_to_root("a").len(), 2);
        assert_eq!(t.nodes().len(), 3);
        assert_eq!(ids(&t.roots()), ["s"]);
    }
}
