//! Skinned meshes in authoring form.

use crate::error::{Error, Result};
use glam::{Vec2, Vec3};

/// The most joints that influence one vertex.
pub const MAX_INFLUENCES: usize = 4;

/// One vertex as the GPU reads it (the skinning module's `wgpu_anim_Vertex`, in
/// `shaders/skinning_module.wgsl`, which the built-in renderer's `shaders/skin.wgsl` imports); its
/// vertex buffer layout is [`SkinVertex::LAYOUT`].
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SkinVertex {
    /// Bind-pose position, model space.
    pub position: [f32; 3],
    /// Bind-pose normal, model space, unit length.
    pub normal: [f32; 3],
    /// Texture coordinates.
    pub uv: [f32; 2],
    /// Skeleton joint indices of up to four influences (unused ones have weight 0).
    pub joints: [u16; 4],
    /// Influence weights, summing to 1.
    pub weights: [f32; 4],
}
const _: () = assert!(std::mem::size_of::<SkinVertex>() == 56);

impl SkinVertex {
    /// The vertex attributes at shader locations `first..first + 5`: position (`Float32x3`, offset
    /// 0), normal (`Float32x3`, 12), uv (`Float32x2`, 24), joints (`Uint16x4`, 32, read as
    /// `vec4<u32>`) and weights (`Float32x4`, 40).
    #[must_use]
    pub const fn attributes(first: u32) -> [wgpu::VertexAttribute; 5] {
        use std::mem::offset_of;
        use wgpu::VertexFormat as F;
        const fn at(format: F, offset: usize, shader_location: u32) -> wgpu::VertexAttribute {
            wgpu::VertexAttribute {
                format,
                offset: offset as u64,
                shader_location,
            }
        }
        [
            at(F::Float32x3, offset_of!(SkinVertex, position), first),
            at(F::Float32x3, offset_of!(SkinVertex, normal), first.saturating_add(1)),
            at(F::Float32x2, offset_of!(SkinVertex, uv), first.saturating_add(2)),
            at(F::Uint16x4, offset_of!(SkinVertex, joints), first.saturating_add(3)),
            at(F::Float32x4, offset_of!(SkinVertex, weights), first.saturating_add(4)),
        ]
    }

    /// [`SkinVertex::attributes`] at locations 0–4.
    pub const ATTRIBUTES: [wgpu::VertexAttribute; 5] = Self::attributes(0);

    /// The vertex buffer layout of a `SkinVertex` buffer, attributes at locations 0–4 (for other
    /// locations, build one around [`SkinVertex::attributes`]).
    pub const LAYOUT: wgpu::VertexBufferLayout<'static> = wgpu::VertexBufferLayout {
        array_stride: size_of::<SkinVertex>() as u64,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &Self::ATTRIBUTES,
    };
}

/// A triangle mesh bound to a skeleton with up to [`MAX_INFLUENCES`] influences per vertex.
#[derive(Clone, Debug, Default)]
pub struct SkinnedMesh {
    /// Name, used in errors.
    pub name: String,
    /// Bind-pose positions (model space).
    pub positions: Vec<Vec3>,
    /// Bind-pose normals; computed from the triangles by [`SkinnedMesh::validate`] when empty.
    pub normals: Vec<Vec3>,
    /// Texture coordinates; zero when empty.
    pub uvs: Vec<Vec2>,
    /// Joint indices per vertex.
    pub joints: Vec<[u16; 4]>,
    /// Weights per vertex; normalized by [`SkinnedMesh::validate`].
    pub weights: Vec<[f32; 4]>,
    /// Triangle list indices.
    pub indices: Vec<u32>,
    /// Morph targets (blend shapes), applied before skinning ([`crate::morph`]); none by
    /// default. [`SkinnedMesh::validate`] checks them; the built-in renderer draws them when the
    /// animator keeps room for their weights.
    pub morph_targets: crate::morph::MorphTargets,
}

impl SkinnedMesh {
    /// Checks the mesh against a skeleton of `joint_count` joints, normalizes weights, fills in
    /// missing normals and texture coordinates.
    ///
    /// Errors: arrays of different lengths, an index out of range, a joint index out of range with
    /// a non-zero weight, negative or non-finite weights, a vertex whose weights sum to zero,
    /// a position that is not finite or has a component beyond
    /// [`MAX_REACH`](crate::reach::MAX_REACH), morph targets that [`crate::MorphTargets::build`]
    /// refuses. [`AnimationLibrary::check_mesh`](crate::AnimationLibrary::check_mesh)
    /// checks where its skinned vertices can go.
    pub fn validate(&mut self, joint_count: usize) -> Result<()> {
        let err = |what: String| Error::Mesh {
            mesh: self.name.clone(),
            what,
        };
        let n = self.positions.len();
        if n == 0 || self.indices.is_empty() {
            return Err(err("has no vertices or no triangles".into()));
        }
        if self.joints.len() != n || self.weights.len() != n {
            return Err(err(format!(
                "{n} positions but {} joint and {} weight entries",
                self.joints.len(),
                self.weights.len()
            )));
        }
        if !self.normals.is_empty() && self.normals.len() != n {
            return Err(err(format!("{n} positions but {} normals", self.normals.len())));
        }
        if !self.uvs.is_empty() && self.uvs.len() != n {
            return Err(err(format!("{n} positions but {} texture coordinates", self.uvs.len())));
        }
        if !self.indices.len().is_multiple_of(3) {
            return Err(err(format!(
                "{} indices is not a whole number of triangles",
                self.indices.len()
            )));
        }
        if let Some((i, &ix)) = self.indices.iter().enumerate().find(|&(_, &ix)| ix as usize >= n) {
            return Err(err(format!("index {i} is {ix}, out of range (0..{n})")));
        }
        let within = |p: &Vec3| p.is_finite() && f64::from(p.abs().max_element()) <= crate::reach::MAX_REACH;
        if let Some(v) = self.positions.iter().position(|p| !within(p)) {
            return Err(err(format!(
                "vertex {v}: position {} is not finite or farther than {:.0e} from the origin",
                self.positions[v],
                crate::reach::MAX_REACH
            )));
        }
        for v in 0..n {
            let w = self.weights[v];
            if w.iter().any(|w| !w.is_finite() || *w < 0.0) {
                return Err(err(format!(
                    "vertex {v}: weights {w:?} must be finite and non-negative"
                )));
            }
            let sum: f32 = w.iter().sum();
            if sum <= 1e-8 {
                return Err(err(format!("vertex {v}: weights sum to zero")));
            }
            for (wk, jk) in w.iter().zip(self.joints[v].iter_mut()) {
                if *wk > 0.0 && *jk as usize >= joint_count {
                    return Err(err(format!(
                        "vertex {v}: joint index {jk} out of range (skeleton has {joint_count} joints)"
                    )));
                }
                if *wk == 0.0 {
                    *jk = 0; // never read out of range on the GPU
                }
            }
            self.weights[v] = w.map(|x| x / sum);
        }
        if self.normals.is_empty() {
            self.normals = compute_normals(&self.positions, &self.indices);
        }
        if self.uvs.is_empty() {
            self.uvs = vec![Vec2::ZERO; n];
        }
        if !self.morph_targets.targets.is_empty() {
            self.morph_targets.build(n)?;
        }
        Ok(())
    }

    /// Interleaved vertices for the GPU. Call [`SkinnedMesh::validate`] first.
    #[must_use]
    pub fn gpu_vertices(&self) -> Vec<SkinVertex> {
        (0..self.positions.len())
            .map(|v| SkinVertex {
                position: self.positions[v].to_array(),
                normal: self.normals.get(v).copied().unwrap_or(Vec3::Y).to_array(),
                uv: self.uvs.get(v).copied().unwrap_or(Vec2::ZERO).to_array(),
                joints: self.joints[v],
                weights: self.weights[v],
            })
            .collect()
    }

    /// Bounding box of the bind-pose positions.
    #[must_use]
    pub fn bounds(&self) -> (Vec3, Vec3) {
        self.positions
            .iter()
            .fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(lo, hi), p| {
                (lo.min(*p), hi.max(*p))
            })
    }
}

/// Area-weighted vertex normals of a triangle list.
#[must_use]
pub fn compute_normals(positions: &[Vec3], indices: &[u32]) -> Vec<Vec3> {
    let mut normals = vec![Vec3::ZERO; positions.len()];
    for t in indices.chunks_exact(3) {
        let (a, b, c) = (t[0] as usize, t[1] as usize, t[2] as usize);
        let n = (positions[b] - positions[a]).cross(positions[c] - positions[a]);
        normals[a] += n;
        normals[b] += n;
        normals[c] += n;
    }
    normals.iter().map(|n| n.try_normalize().unwrap_or(Vec3::Y)).collect()
}
