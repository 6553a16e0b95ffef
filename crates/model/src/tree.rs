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
    /// The children of entry `i` are `child_list[child_start[i]..child_start[i + 1]]`,
    /// in file order (one flat list: a vector per parent was a million
    /// allocations for a long session).
    child_start: Vec<usize>,
    child_list: Vec<usize>,
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
        // Each kept entry's parent (by index), or none for a root.
        let mut parent = vec![None; entries.len()];
        let mut roots = Vec::new();
        let mut count = vec![0usize; entries.len() + 1];
        for (i, e) in entries.iter().enumerate() {
            if by_id.get(e.id.as_str()) != Some(&i) {
                continue; // shadowed duplicate
            }
            match e.parent_id.as_deref() {
                Some(p) if p != e.id => match by_id.get(p) {
                    Some(&pi) => {
                        parent[i] = Some(pi);
                        count[pi + 1] += 1;
                    }
                    None => roots.push(i),
                },
                _ => roots.push(i),
            }
        }
        for i in 1..count.len() {
            count[i] += count[i - 1];
        }
        let child_start = count;
        let mut next = child_start.clone();
        let mut child_list = vec![0; child_start[entries.len()]];
        for (i, p) in parent.iter().enumerate() {
            if let Some(p) = *p {
                child_list[next[p]] = i;
                next[p] += 1;
            }
        }
        Tree {
            entries,
            by_id,
            child_start,
            child_list,
            roots,
        }
    }

    /// The children of entry `i`, by index, in file order.
    fn kids(&self, i: usize) -> &[usize] {
        &self.child_list[self.child_start[i]..self.child_start[i + 1]]
    }

    /// Returns the entry with `id`.
    pub fn get(&self, id: &str) -> Option<&'a Entry> {
        self.by_id.get(id).map(|&i| &self.entries[i])
    }

    /// Returns the index in the entries of the entry with `id`.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// Returns the roots, in file order.
    pub fn roots(&self) -> Vec<&'a Entry> {
        self.roots.iter().map(|&i| &self.entries[i]).collect()
    }

    /// Returns the direct children of `id`, in file order.
    pub fn children(&self, id: &str) -> Vec<&'a Entry> {
        self.by_id
            .get(id)
            .map(|&i| self.kids(i).iter().map(|&k| &self.entries[k]).collect())
            .unwrap_or_default()
    }

    /// Returns the entries from the root down to `id` (empty when unknown).
    pub fn path_to_root(&self, id: &str) -> Vec<&'a Entry> {
        // A path holds each entry once, so a walk longer than the session
        // went round a cycle: only then is it walked again remembering
        // what it has seen (which costs a set of every id on the way).
        self.walk_up(id, false)
            .or_else(|| self.walk_up(id, true))
            .unwrap_or_default()
    }

    /// The entries from `id` up to its root, root first. With `remember`,
    /// the walk stops where it comes back to an entry it has seen; without,
    /// it gives up (`None`) once it is longer than the session.
    fn walk_up(&self, id: &str, remember: bool) -> Option<Vec<&'a Entry>> {
        let mut path = Vec::new();
        let mut seen = HashSet::new();
        let mut cur = self.get(id);
        while let Some(e) = cur {
            if remember {
                if !seen.insert(e.id.as_str()) {
                    break;
                }
            } else if path.len() > self.entries.len() {
                return None;
            }
            path.push(e);
            cur = match e.parent_id.as_deref() {
                Some(p) if p != e.id => self.get(p),
                _ => None,
            };
        }
        path.reverse();
        Some(path)
    }

    /// Returns the entries that have more than one child.
    pub fn branch_points(&self) -> Vec<&'a Entry> {
        (0..self.entries.len())
            .filter(|&i| self.kids(i).len() > 1)
            .map(|i| &self.entries[i])
            .collect()
    }

    /// Returns the leaves (entries with no children), in file order.
    pub fn leaves(&self) -> Vec<&'a Entry> {
        let mut out = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            if self.by_id.get(e.id.as_str()) == Some(&i) && self.kids(i).is_empty() {
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
            let kids = self.kids(i);
            let branch = kids.len() > 1;
            for &k in kids.iter().rev() {
                stack.push((k, depth + 1, branch));
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
    fn random_forests_walk_as_the_definitions_say() {
        // Ids drawn from a small set (so some repeat and the last one
        // wins), parents from the same set (so some are missing, some are
        // the entry itself, some make cycles), against the definitions
        // written out plainly.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..300 {
            let len = 1 + next(30) as usize;
            let entries: Vec<Entry> = (0..len)
                .map(|_| {
                    let id = format!("n{}", next(40));
                    let parent = (next(5) > 0).then(|| format!("n{}", next(40)));
                    e(&id, parent.as_deref())
                })
                .collect();
            let t = Tree::new(&entries);
            let winner = |id: &str| entries.iter().rposition(|x| x.id == id);
            let indices = |v: Vec<&Entry>| -> Vec<usize> {
                v.iter().map(|x| winner(&x.id).unwrap()).collect()
            };
            let kept: Vec<usize> = (0..len)
                .filter(|&i| winner(&entries[i].id) == Some(i))
                .collect();
            let parent_of = |i: usize| {
                entries[i]
                    .parent_id
                    .as_deref()
                    .filter(|p| *p != entries[i].id)
                    .and_then(winner)
            };
            for &i in &kept {
                let want: Vec<usize> = kept
                    .iter()
                    .copied()
                    .filter(|&k| parent_of(k) == Some(i))
                    .collect();
                assert_eq!(indices(t.children(&entries[i].id)), want);
                // The path: parents up to a root or the first repeat.
                let mut want_path = Vec::new();
                let mut cur = Some(i);
                while let Some(c) = cur {
                    if want_path.contains(&c) {
                        break;
                    }
                    want_path.push(c);
                    cur = parent_of(c);
                }
                want_path.reverse();
                assert_eq!(indices(t.path_to_root(&entries[i].id)), want_path);
            }
            let roots: Vec<usize> = kept
                .iter()
                .copied()
                .filter(|&i| parent_of(i).is_none())
                .collect();
            assert_eq!(
                ids(&t.roots()),
                roots
                    .iter()
                    .map(|&i| entries[i].id.clone())
                    .collect::<Vec<_>>()
            );
            let n_kids = |i: usize| kept.iter().filter(|&&k| parent_of(k) == Some(i)).count();
            let points: Vec<String> = kept
                .iter()
                .filter(|&&i| n_kids(i) > 1)
                .map(|&i| entries[i].id.clone())
                .collect();
            assert_eq!(ids(&t.branch_points()), points);
            let leaves: Vec<String> = kept
                .iter()
                .filter(|&&i| n_kids(i) == 0)
                .map(|&i| entries[i].id.clone())
                .collect();
            assert_eq!(ids(&t.leaves()), leaves);
            assert_eq!(t.nodes().len(), kept.len());
        }
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
