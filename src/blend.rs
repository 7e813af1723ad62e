//! Blend trees: authoring types ([`BlendTree`], [`BlendNode`]) and their validated runtime form
//! ([`BlendLibrary`], the exact arrays the GPU reads). The blend-space weights of one node are
//! [`crate::cpu::node_child_weights`], the mirror of `shaders/shared/blend_weights.wgsl`.
//!
//! The weights follow the project's blending reference: 1D blend spaces, 2D bilinear, triangle
//! (barycentric), Delaunay (triangulated at build time), simple directional, freeform Cartesian and
//! freeform directional (gradient bands), and direct blends.

use crate::clip::ClipId;
use crate::error::{Error, Result};
use crate::layout::GpuClip;
use crate::layout::{
    GpuBlendChild, GpuBlendNode, GpuBlendTree, MAX_BLEND_CHILDREN, MAX_BLEND_PARAMETERS, MAX_TREE_NODES, node_kind,
};
use glam::{DVec2, Vec2};

/// The kinds of 2D blend space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Blend2DKind {
    /// Four samples at the corners of an axis-aligned rectangle; bilinear weights (the parameter is
    /// clamped to the rectangle).
    Bilinear,
    /// Three samples; barycentric weights (outside the triangle: the closest point on it).
    Triangle,
    /// Any number (≥ 3) of samples, triangulated at build time; barycentric weights in the
    /// triangle containing the parameter, or at the closest point of the convex hull outside it.
    Delaunay,
    /// Samples at distinct directions, at most one at the origin (the center).
    SimpleDirectional,
    /// Gradient band interpolation in Cartesian space.
    FreeformCartesian,
    /// Gradient band interpolation in polar space (at most one sample at the origin).
    FreeformDirectional,
}

/// A node of a [`BlendTree`]. Children are `(position, node index in BlendTree::nodes)`.
#[derive(Clone, Debug, PartialEq)]
pub enum BlendNode {
    /// A leaf playing a clip.
    Clip(ClipId),
    /// 1D blend space over parameter `parameter`: children at thresholds (any order; sorted when
    /// packed, duplicates are an error).
    Blend1D {
        /// Parameter index (below [`MAX_BLEND_PARAMETERS`]).
        parameter: u32,
        /// `(threshold, child node)`.
        children: Vec<(f32, usize)>,
    },
    /// 2D blend space over parameters `parameters` (x, y).
    Blend2D {
        /// How the weights are computed.
        kind: Blend2DKind,
        /// Parameter indices of the x and y axes.
        parameters: [u32; 2],
        /// `(sample position, child node)`.
        children: Vec<(Vec2, usize)>,
    },
    /// Each child's weight is a parameter of its own, clamped to ≥ 0 and not normalized.
    Direct {
        /// `(parameter index, child node)`.
        children: Vec<(u32, usize)>,
    },
}

/// What [`BlendLibrary::add_tree`] checks a tree's clips against: each clip's runtime header
/// and name, the skeletons' names (for errors) and the tag of the library the clips are of.
#[derive(Clone, Copy, Debug)]
pub struct ClipCatalog<'a> {
    /// The library whose clips these are ([`crate::AnimationLibrary::tag`]): a tree's
    /// [`ClipId`]s must carry it.
    pub library: crate::id::LibraryTag,
    /// Clip headers, by [`ClipId`].
    pub clips: &'a [GpuClip],
    /// Clip names, by [`ClipId`].
    pub clip_names: &'a [String],
    /// Skeleton names, by skeleton index.
    pub skeleton_names: &'a [&'a str],
}

/// A blend tree as authored: nodes referring to each other by index, and the root.
#[derive(Clone, Debug, PartialEq)]
pub struct BlendTree {
    /// Tree name, unique in a [`BlendLibrary`].
    pub name: String,
    /// The nodes. Every node must be reachable from `root`, and the graph must have no cycles
    /// (a node may be shared by several parents).
    pub nodes: Vec<BlendNode>,
    /// Index of the root node in `nodes`.
    pub root: usize,
}

pub use crate::id::BlendTreeId;

/// Blend trees in runtime form: flat arrays, uploaded to the GPU as they are.
///
/// Its [`BlendTreeId`]s carry its tag ([`BlendLibrary::tag`]): a library's blend library has the
/// library's tag; one made on its own ([`BlendLibrary::new`]) a new one.
#[derive(Clone, Debug, Default)]
pub struct BlendLibrary {
    /// The tag its tree ids carry.
    tag: crate::id::LibraryTag,
    /// Tree names, by [`BlendTreeId`].
    pub names: Vec<String>,
    /// Per tree: its nodes and skeleton.
    pub trees: Vec<GpuBlendTree>,
    /// Per tree: `nodes[node_offset..][..node_count]`, root first, parents before children; the
    /// children's `node` indices are relative to the tree's `node_offset`.
    pub nodes: Vec<GpuBlendNode>,
    /// Children of every node: `children[child_offset..][..child_count]`.
    pub children: Vec<GpuBlendChild>,
    /// Delaunay nodes: triangles `[a, b, c, 0]` (counter-clockwise) then the convex hull's edges
    /// `[a, b, 0, 1]` in counter-clockwise order, child indices local to the node.
    pub triangles: Vec<[u32; 4]>,
}

/// Samples closer than this are coincident; thresholds of collinearity and of "at the origin".
pub const BLEND_POSITION_EPSILON: f32 = 1.0e-4;

impl BlendLibrary {
    /// An empty library with a new tag.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty library whose tree ids carry `tag` (an animation library's own).
    pub(crate) fn with_tag(tag: crate::id::LibraryTag) -> Self {
        Self { tag, ..Self::default() }
    }

    /// Gives it `tag` (its animation library's new one).
    pub(crate) fn set_tag(&mut self, tag: crate::id::LibraryTag) {
        self.tag = tag;
    }

    /// The tag its tree ids carry.
    #[must_use]
    pub fn tag(&self) -> crate::id::LibraryTag {
        self.tag
    }

    /// The tree called `name`.
    #[must_use]
    pub fn tree_id(&self, name: &str) -> Option<BlendTreeId> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| BlendTreeId::new(i as u32, self.tag))
    }

    /// The id of tree `index`, if it has one (for tools and tests).
    #[must_use]
    pub fn tree_at(&self, index: u32) -> Option<BlendTreeId> {
        ((index as usize) < self.trees.len()).then(|| BlendTreeId::new(index, self.tag))
    }

    /// The runtime header of tree `id`.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another library issued `id`.
    pub fn tree(&self, id: BlendTreeId) -> Result<&GpuBlendTree> {
        let index = id.check(self.tag)?;
        self.trees.get(index as usize).ok_or_else(|| Error::Limit {
            what: format!(
                "blend tree {index} does not exist (the library has {})",
                self.trees.len()
            ),
        })
    }

    /// The nodes of a tree, root first.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignId`] when another library issued `id`.
    pub fn tree_nodes(&self, id: BlendTreeId) -> Result<&[GpuBlendNode]> {
        let t = self.tree(id)?;
        Ok(&self.nodes[t.node_offset as usize..(t.node_offset + t.node_count) as usize])
    }

    /// Validates `tree` against the clips of `clips` and packs it. On error nothing is added.
    ///
    /// Errors (each names the tree, and the node by its index in `tree.nodes`): a name already
    /// used; no nodes; a root or child index out of range; a cycle; a node not reachable from the
    /// root (unreachable nodes are an error, not dropped); more than [`MAX_TREE_NODES`] nodes or
    /// [`MAX_BLEND_CHILDREN`] children; a parameter index ≥ [`MAX_BLEND_PARAMETERS`]; a clip not in
    /// `clips`; clips of different skeletons; non-finite thresholds or positions; a 1D space with
    /// fewer than 2 children or a repeated threshold; coincident 2D samples (closer than
    /// [`BLEND_POSITION_EPSILON`]); too few samples for the 2D kind (bilinear: exactly 4 at the
    /// corners of an axis-aligned rectangle; triangle: exactly 3, not collinear; Delaunay: ≥ 3,
    /// not all collinear; simple directional: ≥ 2 away from the origin, at most one at it, no two
    /// in one direction; freeform: ≥ 2, directional at most one at the origin); a direct blend
    /// without children; a clip of another library than `clips.library` ("node 2: clip 3 belongs
    /// to another library (library 7), not this one (library 9)").
    ///
    /// Packing: 1D children are sorted by threshold; bilinear corners are stored bottom-left,
    /// bottom-right, top-left, top-right and snapped to the rectangle; directional samples within
    /// [`BLEND_POSITION_EPSILON`] of the origin are stored as exactly 0; Delaunay nodes are
    /// triangulated.
    pub fn add_tree(&mut self, clips: &ClipCatalog<'_>, tree: &BlendTree) -> Result<BlendTreeId> {
        let err = |what: String| Error::Blend {
            tree: tree.name.clone(),
            what,
        };
        if self.tree_id(&tree.name).is_some() {
            return Err(err("a tree of that name already exists".into()));
        }
        let order = checked_order(tree).map_err(err)?;
        let mut packer = TreePacker::new(*clips, &order, self.children.len(), self.triangles.len());
        for &i in &order {
            packer
                .add_node(i, &tree.nodes[i])
                .map_err(|what| err(format!("node {i}: {what}")))?;
        }
        let Some((skeleton, _, _)) = packer.skeleton else {
            return Err(err("has no clip".into()));
        };
        let id = BlendTreeId::new(self.trees.len() as u32, self.tag);
        self.trees.push(GpuBlendTree {
            node_offset: self.nodes.len() as u32,
            node_count: packer.nodes.len() as u32,
            skeleton,
            _pad: 0,
        });
        self.names.push(tree.name.clone());
        self.nodes.extend(packer.nodes);
        self.children.extend(packer.children);
        self.triangles.extend(packer.triangles);
        Ok(id)
    }
}

/// The nodes of `tree` in packing order (root first, parents before children), once it has
/// nodes, its root and child indices are in range, it has no cycle and the root reaches every
/// node.
fn checked_order(tree: &BlendTree) -> std::result::Result<Vec<usize>, String> {
    let n = tree.nodes.len();
    if n == 0 {
        return Err("has no nodes".into());
    }
    if tree.root >= n {
        return Err(format!("root {} is out of range (the tree has {n} nodes)", tree.root));
    }
    let order = topological_order(tree)?;
    if let Some(i) = (0..n).find(|i| !order.contains(i)) {
        return Err(format!("node {i} is not reachable from the root (node {})", tree.root));
    }
    Ok(order)
}

/// A tree being packed: what it adds to the library, kept apart until every node is checked.
struct TreePacker<'a> {
    clips: ClipCatalog<'a>,
    /// Each node's index in packing order, which children refer to.
    local: Vec<u32>,
    /// The library's children and triangles before this tree's.
    child_base: usize,
    triangle_base: usize,
    /// The skeleton of the tree's first clip: `(skeleton, node, clip)`.
    skeleton: Option<(u32, usize, u32)>,
    nodes: Vec<GpuBlendNode>,
    children: Vec<GpuBlendChild>,
    triangles: Vec<[u32; 4]>,
}

impl<'a> TreePacker<'a> {
    fn new(clips: ClipCatalog<'a>, order: &[usize], child_base: usize, triangle_base: usize) -> Self {
        let mut local = vec![0u32; order.len()];
        for (k, &i) in order.iter().enumerate() {
            local[i] = k as u32;
        }
        Self {
            clips,
            local,
            child_base,
            triangle_base,
            skeleton: None,
            nodes: Vec::with_capacity(order.len()),
            children: Vec::new(),
            triangles: Vec::new(),
        }
    }

    /// Checks node `i` and packs it after the nodes before it in packing order.
    fn add_node(&mut self, i: usize, node: &BlendNode) -> std::result::Result<(), String> {
        let mut packed = GpuBlendNode {
            child_offset: (self.child_base + self.children.len()) as u32,
            ..Default::default()
        };
        match node {
            BlendNode::Clip(id) => self.clip(i, *id, &mut packed)?,
            BlendNode::Blend1D { parameter, children } => self.blend_1d(*parameter, children, &mut packed)?,
            BlendNode::Blend2D {
                kind,
                parameters,
                children,
            } => self.blend_2d(*kind, *parameters, children, &mut packed)?,
            BlendNode::Direct { children } => self.direct(children, &mut packed)?,
        }
        self.nodes.push(packed);
        Ok(())
    }

    /// A leaf: its clip exists and animates the skeleton of the tree's first clip.
    fn clip(&mut self, i: usize, id: ClipId, node: &mut GpuBlendNode) -> std::result::Result<(), String> {
        let clips = &self.clips;
        let index = id.check(clips.library).map_err(|e| e.to_string())?;
        let Some(c) = clips.clips.get(index as usize) else {
            return Err(format!(
                "clip {index} does not exist (the animation library has {} clips)",
                clips.clips.len()
            ));
        };
        match self.skeleton {
            None => self.skeleton = Some((c.skeleton, i, index)),
            Some((s, first, first_clip)) if s != c.skeleton => {
                let sname = |s: u32| {
                    clips
                        .skeleton_names
                        .get(s as usize)
                        .map_or_else(|| s.to_string(), |k| (*k).to_string())
                };
                return Err(format!(
                    "clip '{}' animates skeleton '{}', but node {first}'s clip '{}' animates skeleton '{}' \
                     (all clips of a tree must animate one skeleton)",
                    clips.clip_names[index as usize],
                    sname(c.skeleton),
                    clips.clip_names[first_clip as usize],
                    sname(s)
                ));
            }
            Some(_) => {}
        }
        node.kind = node_kind::CLIP;
        node.clip = index;
        Ok(())
    }

    /// A 1D blend space: finite thresholds, no two alike; its children sorted by threshold.
    fn blend_1d(
        &mut self,
        parameter: u32,
        ch: &[(f32, usize)],
        node: &mut GpuBlendNode,
    ) -> std::result::Result<(), String> {
        check_parameter(parameter)?;
        check_child_count(ch.len(), 2)?;
        if let Some(k) = ch.iter().position(|c| !c.0.is_finite()) {
            return Err(format!("child {k}: threshold {} is not finite", ch[k].0));
        }
        let mut sorted: Vec<usize> = (0..ch.len()).collect();
        sorted.sort_by(|&a, &b| ch[a].0.total_cmp(&ch[b].0));
        for w in sorted.windows(2) {
            if ch[w[0]].0 == ch[w[1]].0 {
                return Err(format!(
                    "children {} and {} have the same threshold {}",
                    w[0].min(w[1]),
                    w[0].max(w[1]),
                    ch[w[0]].0
                ));
            }
        }
        node.kind = node_kind::BLEND_1D;
        node.param_x = parameter;
        node.child_count = ch.len() as u32;
        let local = &self.local;
        self.children.extend(
            sorted
                .iter()
                .map(|&k| child(local, Vec2::new(ch[k].0, 0.0), ch[k].1, 0)),
        );
        Ok(())
    }

    /// A 2D blend space: samples as its kind needs them ([`check_2d`]); a Delaunay node's
    /// triangles and convex hull.
    fn blend_2d(
        &mut self,
        kind: Blend2DKind,
        parameters: [u32; 2],
        ch: &[(Vec2, usize)],
        node: &mut GpuBlendNode,
    ) -> std::result::Result<(), String> {
        check_parameter(parameters[0])?;
        check_parameter(parameters[1])?;
        check_child_count(ch.len(), 0)?;
        let positions = check_2d(kind, ch.iter().map(|c| c.0).collect())?;
        node.param_x = parameters[0];
        node.param_y = parameters[1];
        node.child_count = ch.len() as u32;
        node.kind = match kind {
            Blend2DKind::Bilinear => node_kind::BILINEAR,
            Blend2DKind::Triangle => node_kind::TRIANGLE,
            Blend2DKind::Delaunay => node_kind::DELAUNAY,
            Blend2DKind::SimpleDirectional => node_kind::SIMPLE_DIRECTIONAL,
            Blend2DKind::FreeformCartesian => node_kind::FREEFORM_CARTESIAN,
            Blend2DKind::FreeformDirectional => node_kind::FREEFORM_DIRECTIONAL,
        };
        let local = &self.local;
        self.children
            .extend(positions.iter().map(|&(p, k)| child(local, p, ch[k].1, 0)));
        if kind == Blend2DKind::Delaunay {
            let pts: Vec<Vec2> = positions.iter().map(|p| p.0).collect();
            let (tris, hull) = triangulate(&pts).ok_or_else(|| "the samples cannot be triangulated".to_string())?;
            node.triangle_offset = (self.triangle_base + self.triangles.len()) as u32;
            node.triangle_count = (tris.len() + hull.len()) as u32;
            self.triangles
                .extend(tris.iter().map(|t| [t[0] as u32, t[1] as u32, t[2] as u32, 0]));
            let h = hull.len();
            self.triangles
                .extend((0..h).map(|k| [hull[k] as u32, hull[(k + 1) % h] as u32, 0, 1]));
        }
        Ok(())
    }

    /// A direct blend: at least one child, each weighted by a parameter in range.
    fn direct(&mut self, ch: &[(u32, usize)], node: &mut GpuBlendNode) -> std::result::Result<(), String> {
        check_child_count(ch.len(), 1)?;
        for (k, c) in ch.iter().enumerate() {
            check_parameter(c.0).map_err(|e| format!("child {k}: {e}"))?;
        }
        node.kind = node_kind::DIRECT;
        node.child_count = ch.len() as u32;
        let local = &self.local;
        self.children
            .extend(ch.iter().map(|&(param, c)| child(local, Vec2::ZERO, c, param)));
        Ok(())
    }
}

/// The packed child of node `c` (an index in the tree's nodes) at `position`, weighted by
/// `parameter` (direct blends).
fn child(local: &[u32], position: Vec2, c: usize, parameter: u32) -> GpuBlendChild {
    GpuBlendChild {
        position,
        node: local[c],
        parameter,
    }
}

fn check_parameter(p: u32) -> std::result::Result<(), String> {
    if p >= MAX_BLEND_PARAMETERS {
        return Err(format!(
            "parameter index {p} is out of range (at most {MAX_BLEND_PARAMETERS} parameters)"
        ));
    }
    Ok(())
}

fn check_child_count(n: usize, min: usize) -> std::result::Result<(), String> {
    if n < min {
        return Err(format!("has {n} children, needs at least {min}"));
    }
    if n > MAX_BLEND_CHILDREN as usize {
        return Err(format!("has {n} children, at most {MAX_BLEND_CHILDREN} are allowed"));
    }
    Ok(())
}

fn children_of(node: &BlendNode) -> Vec<usize> {
    match node {
        BlendNode::Clip(_) => Vec::new(),
        BlendNode::Blend1D { children, .. } => children.iter().map(|c| c.1).collect(),
        BlendNode::Blend2D { children, .. } => children.iter().map(|c| c.1).collect(),
        BlendNode::Direct { children } => children.iter().map(|c| c.1).collect(),
    }
}

/// The nodes reachable from the root, parents before children (reverse post-order of a depth-first
/// search). Errors: child index out of range, cycle, too many nodes.
fn topological_order(tree: &BlendTree) -> std::result::Result<Vec<usize>, String> {
    let n = tree.nodes.len();
    // 0: not seen, 1: on the search path, 2: finished.
    let mut state = vec![0u8; n];
    let mut post = Vec::new();
    let mut stack: Vec<(usize, usize)> = vec![(tree.root, 0)];
    state[tree.root] = 1;
    let mut seen = 1usize;
    while let Some(&(v, visited)) = stack.last() {
        let ch = children_of(&tree.nodes[v]);
        if visited < ch.len() {
            stack.last_mut().unwrap().1 += 1;
            // Last child first: the reversed post-order then keeps siblings in authored order.
            let k = ch.len() - 1 - visited;
            let c = ch[k];
            if c >= n {
                return Err(format!(
                    "node {v}: child {k} refers to node {c}, but the tree has {n} nodes"
                ));
            }
            match state[c] {
                0 => {
                    state[c] = 1;
                    seen += 1;
                    if seen > MAX_TREE_NODES as usize {
                        return Err(format!("more than {MAX_TREE_NODES} nodes are reachable from the root"));
                    }
                    stack.push((c, 0));
                }
                1 => {
                    let path: Vec<String> = stack.iter().map(|s| s.0.to_string()).collect();
                    return Err(format!(
                        "node {v}: child {k} (node {c}) closes a cycle ({} -> {c})",
                        path.join(" -> ")
                    ));
                }
                _ => {}
            }
        } else {
            state[v] = 2;
            post.push(v);
            stack.pop();
        }
    }
    post.reverse();
    Ok(post)
}

/// Validates a 2D node's sample positions and returns them as packed: `(position, index of the
/// authored child)`, in storage order.
fn check_2d(kind: Blend2DKind, mut pos: Vec<Vec2>) -> std::result::Result<Vec<(Vec2, usize)>, String> {
    const EPS: f32 = BLEND_POSITION_EPSILON;
    if let Some(k) = pos.iter().position(|p| !p.is_finite()) {
        return Err(format!("child {k}: position {} is not finite", pos[k]));
    }
    let directional = matches!(kind, Blend2DKind::SimpleDirectional | Blend2DKind::FreeformDirectional);
    if directional {
        for p in &mut pos {
            if p.length() < EPS {
                *p = Vec2::ZERO;
            }
        }
        let centers: Vec<usize> = (0..pos.len()).filter(|&k| pos[k] == Vec2::ZERO).collect();
        if centers.len() > 1 {
            return Err(format!(
                "children {} and {} are both at the origin (at most one may be)",
                centers[0], centers[1]
            ));
        }
    }
    for a in 0..pos.len() {
        for b in a + 1..pos.len() {
            if pos[a].distance(pos[b]) < EPS {
                return Err(format!(
                    "children {a} and {b} are at the same position {} (closer than {EPS})",
                    pos[a]
                ));
            }
        }
    }
    let n = pos.len();
    let need = |what: &str| -> std::result::Result<(), String> {
        Err(format!("a {kind:?} blend space needs {what}; it has {n} children"))
    };
    let indexed: Vec<(Vec2, usize)> = pos.iter().copied().zip(0..).collect();
    match kind {
        Blend2DKind::Bilinear => {
            if n != 4 {
                need("exactly 4 samples")?;
            }
            let lo = pos.iter().fold(Vec2::INFINITY, |a, &p| a.min(p));
            let hi = pos.iter().fold(Vec2::NEG_INFINITY, |a, &p| a.max(p));
            let corners = [
                Vec2::new(lo.x, lo.y),
                Vec2::new(hi.x, lo.y),
                Vec2::new(lo.x, hi.y),
                Vec2::new(hi.x, hi.y),
            ];
            let mut out = Vec::with_capacity(4);
            for c in corners {
                let k = (0..4).find(|&k| (pos[k] - c).abs().max_element() <= EPS);
                match k {
                    Some(k) if hi.x - lo.x > EPS && hi.y - lo.y > EPS => out.push((c, k)),
                    _ => {
                        return Err(format!(
                            "the 4 samples of a bilinear blend space must be the corners of an axis-aligned rectangle \
                             (no sample at corner {c})"
                        ));
                    }
                }
            }
            Ok(out)
        }
        Blend2DKind::Triangle => {
            if n != 3 {
                need("exactly 3 samples")?;
            }
            if triangle_height(pos[0], pos[1], pos[2]) < EPS {
                return Err("the 3 samples of a triangle blend space are collinear".into());
            }
            Ok(indexed)
        }
        Blend2DKind::Delaunay => {
            if n < 3 {
                need("at least 3 samples")?;
            }
            let (a, b) = farthest_pair(&pos);
            let off = pos
                .iter()
                .map(|&p| triangle_height_from(pos[a], pos[b], p))
                .fold(0.0f32, f32::max);
            if off < EPS {
                return Err("the samples of a Delaunay blend space are all collinear".into());
            }
            Ok(indexed)
        }
        Blend2DKind::SimpleDirectional => {
            let dirs: Vec<usize> = (0..n).filter(|&k| pos[k] != Vec2::ZERO).collect();
            if dirs.len() < 2 {
                return Err(format!(
                    "a simple directional blend space needs at least 2 samples away from the origin; it has {}",
                    dirs.len()
                ));
            }
            for (x, &a) in dirs.iter().enumerate() {
                for &b in &dirs[x + 1..] {
                    if angle_between(pos[a], pos[b]) < EPS {
                        return Err(format!("children {a} and {b} are in the same direction"));
                    }
                }
            }
            Ok(indexed)
        }
        Blend2DKind::FreeformCartesian | Blend2DKind::FreeformDirectional => {
            if n < 2 {
                need("at least 2 samples")?;
            }
            Ok(indexed)
        }
    }
}

fn angle_between(a: Vec2, b: Vec2) -> f32 {
    a.perp_dot(b).abs().atan2(a.dot(b))
}

/// Distance of `p` from the line through `a` and `b`.
fn triangle_height_from(a: Vec2, b: Vec2, p: Vec2) -> f32 {
    let (a, b, p) = (a.as_dvec2(), b.as_dvec2(), p.as_dvec2());
    let l = (b - a).length();
    if l == 0.0 {
        return 0.0;
    }
    ((b - a).perp_dot(p - a).abs() / l) as f32
}

/// The smallest height of a triangle.
fn triangle_height(a: Vec2, b: Vec2, c: Vec2) -> f32 {
    triangle_height_from(a, b, c)
        .min(triangle_height_from(b, c, a))
        .min(triangle_height_from(c, a, b))
}

fn farthest_pair(pos: &[Vec2]) -> (usize, usize) {
    let mut best = (0, 1, -1.0f32);
    for a in 0..pos.len() {
        for b in a + 1..pos.len() {
            let d = pos[a].distance_squared(pos[b]);
            if d > best.2 {
                best = (a, b, d);
            }
        }
    }
    (best.0, best.1)
}

fn orient(a: DVec2, b: DVec2, c: DVec2) -> f64 {
    (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
}

/// > 0 when `d` is inside the circumcircle of the counter-clockwise triangle `a b c`.
fn incircle(a: DVec2, b: DVec2, c: DVec2, d: DVec2) -> f64 {
    let (ad, bd, cd) = (a - d, b - d, c - d);
    ad.length_squared() * (bd.x * cd.y - cd.x * bd.y) - bd.length_squared() * (ad.x * cd.y - cd.x * ad.y)
        + cd.length_squared() * (ad.x * bd.y - bd.x * ad.y)
}

/// Delaunay triangulation of at most a few dozen points (not all collinear, no two equal):
/// triangles (counter-clockwise) and the convex hull (counter-clockwise, collinear points kept).
///
/// A sweep in lexicographic order builds a valid triangulation using orientation tests only
/// (each new point is outside the hull so far and is joined to the hull edges it sees), then
/// Lawson's edge flips make it Delaunay. A flip needs the opposite point strictly inside the
/// circumcircle (beyond a tolerance), so cocircular points (a square's corners) keep either
/// diagonal and the flipping terminates.
fn triangulate(points: &[Vec2]) -> Option<(Vec<[usize; 3]>, Vec<usize>)> {
    let p: Vec<DVec2> = points.iter().map(|v| v.as_dvec2()).collect();
    let n = p.len();
    if n < 3 {
        return None;
    }
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| p[a].x.total_cmp(&p[b].x).then(p[a].y.total_cmp(&p[b].y)));
    let mut m = 2;
    while m < n && orient(p[idx[0]], p[idx[1]], p[idx[m]]) == 0.0 {
        m += 1;
    }
    if m == n {
        return None;
    }
    let q = idx[m];
    let chain = &idx[..m];
    let left = orient(p[idx[0]], p[idx[m - 1]], p[q]) > 0.0;
    let mut tris: Vec<[usize; 3]> = chain
        .windows(2)
        .map(|w| if left { [w[0], w[1], q] } else { [w[1], w[0], q] })
        .collect();
    let mut hull: Vec<usize> = if left {
        chain.iter().copied().chain([q]).collect()
    } else {
        [idx[0], q]
            .into_iter()
            .chain(chain[1..].iter().rev().copied())
            .collect()
    };
    for &r in &idx[m + 1..] {
        let h = hull.len();
        let vis: Vec<bool> = (0..h)
            .map(|e| orient(p[hull[e]], p[hull[(e + 1) % h]], p[r]) < 0.0)
            .collect();
        let start = (0..h).find(|&e| vis[e] && !vis[(e + h - 1) % h])?;
        let mut e = start;
        while vis[e] {
            tris.push([hull[(e + 1) % h], hull[e], r]);
            e = (e + 1) % h;
        }
        let mut next = vec![hull[start], r];
        while e != start {
            next.push(hull[e]);
            e = (e + 1) % h;
        }
        hull = next;
    }
    // Lawson flips.
    let lo = p.iter().fold(DVec2::INFINITY, |a, &v| a.min(v));
    let hi = p.iter().fold(DVec2::NEG_INFINITY, |a, &v| a.max(v));
    let scale = (hi - lo).max_element();
    let tolerance = 1.0e-9 * scale.powi(4);
    for _ in 0..10_000 {
        let Some((t1, t2, [a, b, c], d)) = find_flip(&p, &tris, tolerance) else {
            return Some((tris, hull));
        };
        tris[t1] = [a, d, c];
        tris[t2] = [d, b, c];
    }
    None
}

/// An edge `a b` of triangle `t1 = (a, b, c)` whose neighbour `t2 = (b, a, d)` has `d` inside the
/// circumcircle of `t1`, with the flipped triangles counter-clockwise.
fn find_flip(p: &[DVec2], tris: &[[usize; 3]], tolerance: f64) -> Option<(usize, usize, [usize; 3], usize)> {
    for (t1, x) in tris.iter().enumerate() {
        for e1 in 0..3 {
            let (a, b, c) = (x[e1], x[(e1 + 1) % 3], x[(e1 + 2) % 3]);
            for (t2, y) in tris.iter().enumerate() {
                for e2 in 0..3 {
                    if t2 != t1 && y[e2] == b && y[(e2 + 1) % 3] == a {
                        let d = y[(e2 + 2) % 3];
                        if incircle(p[a], p[b], p[c], p[d]) > tolerance
                            && orient(p[a], p[d], p[c]) > 0.0
                            && orient(p[d], p[b], p[c]) > 0.0
                        {
                            return Some((t1, t2, [a, b, c], d));
                        }
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_triangulation(pts: &[Vec2]) -> (Vec<[usize; 3]>, Vec<usize>) {
        let (tris, hull) = triangulate(pts).expect("triangulates");
        let p: Vec<DVec2> = pts.iter().map(|v| v.as_dvec2()).collect();
        let area = |t: &[usize; 3]| orient(p[t[0]], p[t[1]], p[t[2]]) / 2.0;
        assert!(tris.iter().all(|t| area(t) > 0.0), "{tris:?}");
        let hull_area: f64 = (0..hull.len())
            .map(|k| p[hull[k]].perp_dot(p[hull[(k + 1) % hull.len()]]) / 2.0)
            .sum();
        let sum: f64 = tris.iter().map(area).sum();
        assert!(
            (sum - hull_area).abs() < 1e-9,
            "triangles cover {sum}, hull {hull_area}"
        );
        (tris, hull)
    }

    #[test]
    fn triangulation_of_a_square_with_a_centre_has_four_triangles() {
        let pts = [
            Vec2::new(-1.0, -1.0),
            Vec2::new(1.0, -1.0),
            Vec2::new(-1.0, 1.0),
            Vec2::new(1.0, 1.0),
            Vec2::ZERO,
        ];
        let (tris, hull) = check_triangulation(&pts);
        assert_eq!(tris.len(), 4);
        assert_eq!(hull.len(), 4);
        assert!(tris.iter().all(|t| t.contains(&4)));
    }

    #[test]
    fn triangulation_handles_collinear_and_cocircular_points() {
        // A grid: many collinear and cocircular points.
        let grid: Vec<Vec2> = (0..16).map(|k| Vec2::new((k % 4) as f32, (k / 4) as f32)).collect();
        let (tris, hull) = check_triangulation(&grid);
        assert_eq!(tris.len(), 18);
        assert_eq!(hull.len(), 12);
        // Points on a circle.
        let circle: Vec<Vec2> = (0..12)
            .map(|k| Vec2::from_angle(k as f32 * std::f32::consts::TAU / 12.0) * 2.0)
            .collect();
        let (tris, _) = check_triangulation(&circle);
        assert_eq!(tris.len(), 10);
        // A collinear start.
        let line = [
            Vec2::ZERO,
            Vec2::X,
            Vec2::X * 2.0,
            Vec2::new(1.0, 1.0),
            Vec2::new(1.0, -1.0),
        ];
        check_triangulation(&line);
    }
}
