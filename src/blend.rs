//! Blend trees (stub; replaced by the blend-space implementation).
use crate::layout::{GpuBlendChild, GpuBlendNode, GpuBlendTree};

/// Blend trees in runtime form.
#[derive(Clone, Debug, Default)]
pub struct BlendLibrary {
    /// Tree names.
    pub names: Vec<String>,
    /// Trees.
    pub trees: Vec<GpuBlendTree>,
    /// Nodes.
    pub nodes: Vec<GpuBlendNode>,
    /// Children.
    pub children: Vec<GpuBlendChild>,
    /// Delaunay triangles and hull edges.
    pub triangles: Vec<[u32; 4]>,
}

/// Index of a blend tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlendTreeId(pub u32);

/// Weights of a node's children.
#[must_use]
pub fn node_child_weights(_lib: &BlendLibrary, _node: &GpuBlendNode, _params: glam::Vec4) -> [f32; 16] {
    [0.0; 16]
}

/// A blend tree asset (stub).
#[derive(Clone, Debug, Default)]
pub struct BlendTree {
    /// Name.
    pub name: String,
}

impl BlendLibrary {
    /// Adds a tree (stub).
    pub fn add_tree(
        &mut self,
        _clips: &crate::library::AnimationLibrary,
        _tree: &BlendTree,
    ) -> crate::Result<BlendTreeId> {
        Err(crate::Error::Limit { what: "stub".into() })
    }
}
