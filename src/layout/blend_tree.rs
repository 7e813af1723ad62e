//! Blend trees on the GPU: node kinds and the tree, node and child records the clock stage
//! walks (WGSL `BlendTree`, `BlendNode`, `BlendChild`, declared from these).

/// Blend node kinds (`GpuBlendNode::kind`), matching `NODE_*` in `shaders/shared/types.wgsl`.
pub mod node_kind {
    /// A clip (leaf); `GpuBlendNode::clip` names it.
    pub const CLIP: u32 = 0;
    /// 1D blend space: children at thresholds `position.x`, sorted ascending.
    pub const BLEND_1D: u32 = 1;
    /// 2D bilinear: four children at the corners of a rectangle.
    pub const BILINEAR: u32 = 2;
    /// 2D barycentric over three children.
    pub const TRIANGLE: u32 = 3;
    /// 2D Delaunay: triangles precomputed; outside the hull, the closest hull point.
    pub const DELAUNAY: u32 = 4;
    /// 2D simple directional.
    pub const SIMPLE_DIRECTIONAL: u32 = 5;
    /// 2D freeform Cartesian (gradient bands).
    pub const FREEFORM_CARTESIAN: u32 = 6;
    /// 2D freeform directional (polar gradient bands).
    pub const FREEFORM_DIRECTIONAL: u32 = 7;
    /// Direct: each child's weight is the parameter `GpuBlendChild::parameter`, not normalized.
    pub const DIRECT: u32 = 8;
}

wgsl_struct! {
    /// A blend tree in the runtime library. WGSL `BlendTree`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuBlendTree as "BlendTree" {
        /// First node in the `blend_nodes` array; node 0 of the tree is its root, and nodes are in
        /// topological order (every node before its children).
        pub node_offset: u32,
        /// Number of nodes.
        pub node_count: u32,
        /// Skeleton all its clips animate.
        pub skeleton: u32,
        /// Padding.
        pub _pad: u32,
    }
}

wgsl_struct! {
    /// A blend node. WGSL `BlendNode`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuBlendNode as "BlendNode" {
        /// `node_kind::*`.
        pub kind: u32,
        /// First child in the `blend_children` array.
        pub child_offset: u32,
        /// Number of children (≤ [`MAX_BLEND_CHILDREN`](crate::layout::MAX_BLEND_CHILDREN)).
        pub child_count: u32,
        /// Parameter index (0..4) of the x axis (1D: the parameter).
        pub param_x: u32,
        /// Parameter index of the y axis (2D).
        pub param_y: u32,
        /// Clip index, for `node_kind::CLIP`.
        pub clip: u32,
        /// First entry in the `blend_triangles` array (Delaunay).
        pub triangle_offset: u32,
        /// Number of entries there: triangles `[a, b, c, 0]` then hull edges `[a, b, 0, 1]`, child
        /// indices local to the node.
        pub triangle_count: u32,
    }
}

wgsl_struct! {
    /// A child of a blend node. WGSL `BlendChild`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuBlendChild as "BlendChild" {
        /// Sample position (1D: threshold in x).
        pub position: glam::Vec2,
        /// Index of the child node, relative to the tree's `node_offset`.
        pub node: u32,
        /// Direct blends: the parameter index giving this child's weight. Otherwise 0.
        pub parameter: u32,
    }
}
