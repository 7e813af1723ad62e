//! The scene graph: the scene's root nodes and each scene node's parent, read once; a node reached
//! twice (a cycle, or a node with two parents) is an error.

use super::Importer;
use crate::error::Result;

impl Importer<'_> {
    /// Each node's parent, and whether it is in the scene: the default scene, the first one, or
    /// every root node when there is none.
    pub(super) fn scene_graph(&self, nodes: &[gltf::Node<'_>]) -> Result<(Vec<Option<usize>>, Vec<bool>)> {
        let doc = self.doc;
        let node_count = doc.nodes().count();
        // The scene: the default one, the first one, or every root node when there is none.
        let roots: Vec<usize> = match doc.default_scene().or_else(|| doc.scenes().next()) {
            Some(s) => s.nodes().map(|n| n.index()).collect(),
            None => {
                let mut has_parent = vec![false; node_count];
                for n in doc.nodes() {
                    for c in n.children() {
                        if let Some(p) = has_parent.get_mut(c.index()) {
                            *p = true;
                        }
                    }
                }
                (0..node_count).filter(|&i| !has_parent[i]).collect()
            }
        };
        // Parents of scene nodes; a node reached twice means a cycle or a shared child.
        let mut parent: Vec<Option<usize>> = vec![None; node_count];
        let mut in_scene = vec![false; node_count];
        let mut stack: Vec<(usize, Option<usize>)> = roots.iter().rev().map(|&r| (r, None)).collect();
        while let Some((n, p)) = stack.pop() {
            if n >= node_count {
                return Err(self.err(format!("node index {n} out of range")));
            }
            if in_scene[n] {
                return Err(self.err(format!(
                    "node {n} is reached twice in the scene graph (a cycle, or a node with two parents)"
                )));
            }
            in_scene[n] = true;
            parent[n] = p;
            for c in nodes[n].children().collect::<Vec<_>>().into_iter().rev() {
                stack.push((c.index(), Some(n)));
            }
        }
        Ok((parent, in_scene))
    }
}
