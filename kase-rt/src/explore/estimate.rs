//! How much of an exploration is done, estimated from its search tree, for
//! the progress lines: a long run should say whether it will end in a
//! minute or in a year.
//!
//! A depth-first explorer's position says which part of its tree is
//! behind it: at each choice point on the current path, the subtrees of
//! the options already tried. If every node at one depth had as many
//! children as the ones seen, and subtrees at one depth were alike, the
//! part explored would be `Σ_i done_i / width_i · Π_{j<i} 1 / width_j`
//! (the classic estimate for backtracking searches). Where the explorer
//! knows a choice point's options (the DFS) that is its width; where it
//! does not (POR finds a node's next branch only when it gets back to it),
//! the width is the average number of children of the nodes finished at
//! that depth so far. Real trees are lopsided, so this is an estimate —
//! labelled as one — that sharpens as the exploration goes on.

/// The children of the choice points finished so far, per depth, for
/// explorers that cannot know a node's width in advance.
#[derive(Default)]
pub(crate) struct Shape {
    /// Per depth: children summed over finished nodes, and their number.
    per_depth: Vec<(u64, u64)>,
}

impl Shape {
    /// A node at `depth` is finished after `children` branches.
    pub(crate) fn finished(&mut self, depth: usize, children: usize) {
        if self.per_depth.len() <= depth {
            self.per_depth.resize(depth + 1, (0, 0));
        }
        let (sum, nodes) = &mut self.per_depth[depth];
        *sum += children as u64;
        *nodes += 1;
    }

    /// The expected width of a node at `depth` that finished `done`
    /// branches: the average of its depth's finished nodes (of the nearest
    /// deeper depth with any, before a node at this depth has finished),
    /// and at least one more than it finished (it is in its next branch).
    pub(crate) fn width(&self, depth: usize, done: usize) -> f64 {
        let average = self
            .per_depth
            .iter()
            .skip(depth)
            .find(|(_, nodes)| *nodes > 0)
            .map_or(1.0, |&(sum, nodes)| sum as f64 / nodes as f64);
        average.max(done as f64 + 1.0)
    }
}

/// The part of the tree explored, between 0 and 1, from the choice points
/// of the current path, root first: the branches each finished and its
/// (expected) number of branches.
pub(crate) fn explored(path: impl IntoIterator<Item = (usize, f64)>) -> f64 {
    let mut explored = 0.0;
    let mut share = 1.0; // of the whole tree, below the current node
    for (done, width) in path {
        let width = width.max(done as f64 + 1.0);
        explored += share * done as f64 / width;
        share /= width;
        if share == 0.0 {
            break;
        }
    }
    explored
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uniform_tree_is_estimated_exactly() {
        // A binary tree of depth 3 (8 leaves): at leaf 6 (0-based 5, path
        // 1,0,1), five leaves are behind.
        let e = explored([(1, 2.0), (0, 2.0), (1, 2.0)]);
        assert!((e - 5.0 / 8.0).abs() < 1e-12, "{e}");
        assert_eq!(explored([(0, 3.0), (0, 3.0)]), 0.0);
        // A width below what was done is raised to done + 1.
        assert!((explored([(2, 1.0)]) - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn widths_come_from_finished_nodes_at_the_depth_or_deeper() {
        let mut shape = Shape::default();
        assert_eq!(shape.width(0, 0), 1.0);
        shape.finished(3, 2);
        shape.finished(3, 4);
        assert_eq!(shape.width(3, 0), 3.0);
        // Nothing finished at depth 1 yet: the nearest deeper depth's.
        assert_eq!(shape.width(1, 0), 3.0);
        // A node that finished five branches has at least six.
        assert_eq!(shape.width(3, 5), 6.0);
        assert_eq!(shape.width(4, 0), 1.0);
    }
}
