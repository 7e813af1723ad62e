//! Morph targets (blend shapes, Game Engine Architecture 11.7.3): displacements of a mesh's
//! vertices that each character mixes in by its own weights, before skinning.
//!
//! Authoring data, [`MorphTargets`], is checked and packed by [`MorphTargets::build`] into a
//! [`MorphSet`]: the exact words the GPU reads (`wgpu::Buffer` in
//! [`crate::gpu::GpuMorphTargets`]), stored **sparse** and **vertex-major**: each vertex lists
//! only the targets that move it, so a target that moves 5 % of a mesh costs 5 % of a dense one,
//! and a vertex shader sums a vertex's displacements without looking at the others. There is no
//! cap on targets per mesh.
//!
//! The words (`array<vec4<u32>>`, read by the skinning module's `wgpu_anim_morph` and by its
//! CPU mirror [`crate::cpu::morph`]):
//!
//! - word 0, the header: vertex count, target count, words per entry (2, or 3 with tangents),
//!   the word where the entries start;
//! - from word 1, two vertices per word: each vertex's first entry and entry count;
//! - the entries, each vertex's sorted by target: `(position delta, target)`, `(normal delta,
//!   0)` and, with tangents, `(tangent delta, 0)`, the deltas as `f32` bits.

use crate::error::{Error, Result};
use glam::Vec3;

pub use crate::layout::{MAX_MORPH_WEIGHT, morph_weight_ok as weight_ok};

/// How one vertex moves at weight 1 of its target.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MorphDelta {
    /// The vertex (an index into the mesh's vertices).
    pub vertex: u32,
    /// Position displacement, model space.
    pub position: Vec3,
    /// Normal displacement (the morphed normal is renormalized after skinning).
    pub normal: Vec3,
    /// Tangent displacement (xyz; the bitangent sign is not morphed).
    pub tangent: Vec3,
}

/// One morph target: the vertices it moves and how.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MorphTarget {
    /// Name (glTF `extras.targetNames`), used in errors and to find the target by name.
    pub name: String,
    /// The vertices it moves, each at most once.
    pub deltas: Vec<MorphDelta>,
}

impl MorphTarget {
    /// A target from dense per-vertex displacements (each slice empty, or one entry per
    /// vertex): only the vertices with a non-zero displacement are kept.
    #[must_use]
    pub fn from_dense(name: impl Into<String>, positions: &[Vec3], normals: &[Vec3], tangents: &[Vec3]) -> Self {
        let n = positions.len().max(normals.len()).max(tangents.len());
        let at = |s: &[Vec3], v: usize| s.get(v).copied().unwrap_or(Vec3::ZERO);
        let deltas = (0..n)
            .map(|v| MorphDelta {
                vertex: v as u32,
                position: at(positions, v),
                normal: at(normals, v),
                tangent: at(tangents, v),
            })
            .filter(|d| d.position != Vec3::ZERO || d.normal != Vec3::ZERO || d.tangent != Vec3::ZERO)
            .collect();
        Self {
            name: name.into(),
            deltas,
        }
    }
}

/// A mesh's morph targets in authoring form, and the weights a character starts with.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MorphTargets {
    /// The mesh's name, used in errors.
    pub mesh: String,
    /// The targets, in the order weights address them.
    pub targets: Vec<MorphTarget>,
    /// The weights a character starts with (glTF: the node's `weights`, else the mesh's); at
    /// most one per target, missing ones 0.
    pub default_weights: Vec<f32>,
}

impl MorphTargets {
    /// Checks the targets against a mesh of `vertex_count` vertices and packs them.
    ///
    /// Errors ([`Error::Mesh`], naming the mesh, the target and the vertex): a displacement
    /// that is not finite or beyond [`crate::reach::MAX_REACH`], a vertex out of range or named
    /// twice by one target, more default weights than targets, a default weight that is not
    /// finite or beyond [`MAX_MORPH_WEIGHT`], or more entries than a `u32` counts.
    pub fn build(&self, vertex_count: usize) -> Result<MorphSet> {
        let err = |what: String| Error::Mesh {
            mesh: self.mesh.clone(),
            what,
        };
        if self.default_weights.len() > self.targets.len() {
            return Err(err(format!(
                "{} default morph weights for {} targets",
                self.default_weights.len(),
                self.targets.len()
            )));
        }
        if let Some((t, w)) = self.default_weights.iter().enumerate().find(|(_, w)| !weight_ok(**w)) {
            return Err(err(format!(
                "default weight {w} of morph target {t} ('{}') is not finite or beyond ±{MAX_MORPH_WEIGHT}",
                self.targets[t].name
            )));
        }
        let mut tangents = false;
        let mut entries: Vec<(u32, u32, &MorphDelta)> = Vec::new();
        let mut seen = vec![u32::MAX; vertex_count];
        for (t, target) in self.targets.iter().enumerate() {
            let what = |d: usize| format!("morph target {t} ('{}') delta {d}", target.name);
            for (d, delta) in target.deltas.iter().enumerate() {
                let v = delta.vertex as usize;
                if v >= vertex_count {
                    return Err(err(format!(
                        "{}: vertex {v} out of range (the mesh has {vertex_count})",
                        what(d)
                    )));
                }
                if seen[v] == t as u32 {
                    return Err(err(format!("{}: vertex {v} is moved twice by one target", what(d))));
                }
                seen[v] = t as u32;
                for (attr, x) in [
                    ("position", delta.position),
                    ("normal", delta.normal),
                    ("tangent", delta.tangent),
                ] {
                    if !x.is_finite() || !crate::reach::within(f64::from(x.abs().max_element())) {
                        return Err(err(format!(
                            "{}: vertex {v}'s {attr} displacement {x} is not finite or beyond {:.0e}",
                            what(d),
                            crate::reach::MAX_REACH
                        )));
                    }
                }
                if delta.position == Vec3::ZERO && delta.normal == Vec3::ZERO && delta.tangent == Vec3::ZERO {
                    continue;
                }
                tangents |= delta.tangent != Vec3::ZERO;
                entries.push((delta.vertex, t as u32, delta));
            }
        }
        entries.sort_by_key(|&(v, t, _)| (v, t));
        let stride: u32 = if tangents { 3 } else { 2 };
        let start = 1 + vertex_count.div_ceil(2);
        let words = start as u64 + entries.len() as u64 * u64::from(stride);
        let target_count = u32::try_from(self.targets.len()).ok();
        let (Some(target_count), Ok(vertices), Ok(_)) =
            (target_count, u32::try_from(vertex_count), u32::try_from(words))
        else {
            return Err(err(format!(
                "{} morph targets, {vertex_count} vertices and {} entries do not fit 32-bit indices",
                self.targets.len(),
                entries.len()
            )));
        };
        let mut out = vec![[0u32; 4]; words as usize];
        out[0] = [vertices, target_count, stride, start as u32];
        let mut at = 0usize;
        for v in 0..vertex_count {
            let first = at;
            while at < entries.len() && entries[at].0 as usize == v {
                let (_, t, d) = entries[at];
                let e = start + at * stride as usize;
                let bits = |x: Vec3, w: u32| [x.x.to_bits(), x.y.to_bits(), x.z.to_bits(), w];
                out[e] = bits(d.position, t);
                out[e + 1] = bits(d.normal, 0);
                if tangents {
                    out[e + 2] = bits(d.tangent, 0);
                }
                at += 1;
            }
            out[1 + v / 2][2 * (v % 2)] = first as u32;
            out[1 + v / 2][2 * (v % 2) + 1] = (at - first) as u32;
        }
        Ok(MorphSet {
            mesh: self.mesh.clone(),
            names: self.targets.iter().map(|t| t.name.clone()).collect(),
            default_weights: self.default_weights.clone(),
            entries: entries.len(),
            words: out,
        })
    }
}

impl MorphTargets {
    /// Morph-weight tracks for a clip ([`crate::Clip::morph_weights`]) from its float curves
    /// named as these targets: track `t` is the curve named `targets[t].name` (a curve authored
    /// as a target's weight, as Unreal's curve-driven morph targets are), a track without keys
    /// where the clip has no such curve. Assign them to the clip before it goes into the library,
    /// and the GPU blends them per character as any weight track.
    #[must_use]
    pub fn tracks_from_curves(&self, curves: &[crate::FloatCurve]) -> Vec<crate::Track<f32>> {
        let mut tracks: Vec<crate::Track<f32>> = self
            .targets
            .iter()
            .map(|t| {
                curves
                    .iter()
                    .find(|c| c.name == t.name)
                    .map(|c| c.track.clone())
                    .unwrap_or_default()
            })
            .collect();
        while tracks.last().is_some_and(|t| t.times.is_empty()) {
            tracks.pop();
        }
        tracks
    }
}

/// A mesh's morph targets checked and packed, sparse and vertex-major (the module docs give the
/// layout): what [`crate::gpu::GpuMorphTargets`] uploads and [`crate::cpu::morph`] reads.
#[derive(Clone, Debug, PartialEq)]
pub struct MorphSet {
    mesh: String,
    names: Vec<String>,
    default_weights: Vec<f32>,
    entries: usize,
    words: Vec<[u32; 4]>,
}

impl MorphSet {
    /// The mesh's name.
    #[must_use]
    pub fn mesh(&self) -> &str {
        &self.mesh
    }

    /// Number of targets.
    #[must_use]
    pub fn target_count(&self) -> usize {
        self.names.len()
    }

    /// Number of vertices of the mesh.
    #[must_use]
    pub fn vertex_count(&self) -> usize {
        self.words[0][0] as usize
    }

    /// The targets' names, in order.
    #[must_use]
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The index of the target named `name`.
    #[must_use]
    pub fn target(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The weights a character starts with (as many as targets, missing ones 0).
    #[must_use]
    pub fn default_weights(&self) -> Vec<f32> {
        let mut w = self.default_weights.clone();
        w.resize(self.target_count(), 0.0);
        w
    }

    /// Whether the entries carry tangent displacements (3 words each, else 2).
    #[must_use]
    pub fn has_tangents(&self) -> bool {
        self.words[0][2] == 3
    }

    /// Stored (vertex, target) displacements: the vertices each target moves, summed.
    #[must_use]
    pub fn entry_count(&self) -> usize {
        self.entries
    }

    /// The words the GPU reads.
    #[must_use]
    pub fn words(&self) -> &[[u32; 4]] {
        &self.words
    }

    /// Bytes of [`MorphSet::words`].
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.words.len() as u64 * 16
    }

    /// Bytes the same targets would take stored dense (every vertex of every target, as many
    /// words per vertex as an entry here): what sparse storage saves.
    #[must_use]
    pub fn dense_bytes(&self) -> u64 {
        self.target_count() as u64 * self.vertex_count() as u64 * u64::from(self.words[0][2]) * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets() -> MorphTargets {
        MorphTargets {
            mesh: "face".into(),
            targets: vec![
                MorphTarget::from_dense("smile", &[Vec3::ZERO, Vec3::X, Vec3::ZERO], &[], &[]),
                MorphTarget {
                    name: "blink".into(),
                    deltas: vec![MorphDelta {
                        vertex: 1,
                        position: Vec3::Y,
                        normal: Vec3::Z,
                        tangent: Vec3::ZERO,
                    }],
                },
            ],
            default_weights: vec![0.5],
        }
    }

    #[test]
    fn packs_only_the_vertices_a_target_moves_sorted_by_target() {
        let set = targets().build(3).unwrap();
        assert_eq!(set.entry_count(), 2);
        let w = set.words();
        assert_eq!(w[0], [3, 2, 2, 3]);
        assert_eq!(w[1], [0, 0, 0, 2]); // vertex 0: none; vertex 1: entries 0 and 1
        assert_eq!(w[2], [2, 0, 0, 0]); // vertex 2: none
        assert_eq!(w[3][3], 0);
        assert_eq!(w[5][3], 1);
        assert_eq!(f32::from_bits(w[5][1]), 1.0);
        assert_eq!(set.default_weights(), vec![0.5, 0.0]);
        assert_eq!(set.target("blink"), Some(1));
        assert!(set.bytes() < set.dense_bytes() + 64);
    }

    #[test]
    fn curves_named_as_targets_become_their_weight_tracks() {
        let curve = |name: &str, v: f32| crate::FloatCurve {
            name: name.into(),
            track: crate::Track::constant(v),
        };
        let t = targets();
        let tracks = t.tracks_from_curves(&[curve("ik", 1.0), curve("smile", 0.5)]);
        assert_eq!(tracks.len(), 1, "no track past the last curve named as a target");
        assert_eq!(tracks[0].values, [0.5]);
        let tracks = t.tracks_from_curves(&[curve("blink", 0.25)]);
        assert_eq!((tracks.len(), tracks[0].times.len(), tracks[1].values[0]), (2, 0, 0.25));
    }

    #[test]
    fn bad_targets_are_errors_naming_mesh_target_and_vertex() {
        let mut t = targets();
        t.targets[1].deltas[0].vertex = 7;
        let e = t.build(3).unwrap_err().to_string();
        assert!(
            e.contains("face") && e.contains("blink") && e.contains("vertex 7"),
            "{e}"
        );
        let mut t = targets();
        t.targets[0].deltas[0].normal.y = f32::NAN;
        let e = t.build(3).unwrap_err().to_string();
        assert!(e.contains("smile") && e.contains("normal"), "{e}");
        let mut t = targets();
        t.default_weights = vec![0.0; 3];
        assert!(
            t.build(3)
                .unwrap_err()
                .to_string()
                .contains("3 default morph weights for 2")
        );
        let mut t = targets();
        let again = t.targets[1].deltas[0];
        t.targets[1].deltas.push(again);
        assert!(t.build(3).unwrap_err().to_string().contains("twice"));
    }
}
