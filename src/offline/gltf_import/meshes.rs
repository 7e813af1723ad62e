//! Skinned meshes: mesh nodes and their binding, primitives (triangles, strips and fans),
//! attributes, indices, joints and weights cut to four influences, and morph targets.

use super::accessors::{FLOAT_OR_NORM, JOINT_TYPES, UINTS, Want};
use super::{ImportedMesh, ImportedSkeleton, Importer, asset};
use crate::error::Result;
use crate::mesh::{MAX_INFLUENCES, SkinnedMesh};
use crate::morph::{MorphTarget, MorphTargets};
use glam::Vec2;
use gltf::accessor::Dimensions;
use gltf::mesh::Mode;

impl Importer<'_> {
    /// Every primitive of every mesh node of the scene, bound to its skin's skeleton (or, in a file
    /// without skins, rigidly to its node's joint).
    pub(super) fn meshes(
        &mut self,
        nodes: &[gltf::Node<'_>],
        in_scene: &[bool],
        skeletons: &[ImportedSkeleton],
    ) -> Result<Vec<ImportedMesh>> {
        let mut out = Vec::new();
        let skinned_file = skeletons.iter().any(|s| s.skin.is_some());
        for node in nodes {
            let ni = node.index();
            let Some(mesh) = node.mesh() else { continue };
            if !in_scene.get(ni).copied().unwrap_or(false) {
                continue;
            }
            // (skeleton, binding)
            let (s, bind) = if let Some(skin) = node.skin() {
                match skeletons.iter().position(|s| s.skin == Some(skin.index())) {
                    Some(s) => (s, Binding::Skin(&skeletons[s].skin_joints)),
                    None => continue,
                }
            } else if !skinned_file && !skeletons.is_empty() {
                match skeletons[0].joint_of_node(ni) {
                    Some(j) => (0, Binding::Rigid(j)),
                    None => continue,
                }
            } else {
                self.notes.push(format!(
                    "node {ni}: mesh {} has no skin in a skinned file; not imported",
                    mesh.index()
                ));
                continue;
            };
            let skel = &skeletons[s];
            for prim in mesh.primitives() {
                let mname = format!(
                    "{}/{}",
                    mesh.name()
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("mesh_{}", mesh.index())),
                    prim.index()
                );
                if let Some(m) = self.primitive(&prim, &mname, &bind, skel, (mesh.index(), ni, s))? {
                    out.push(m);
                }
            }
        }
        Ok(out)
    }

    /// One primitive as a mesh bound to `skel`; `None`, with a note, when there is nothing to
    /// import (not triangles, no POSITION, no triangles, or a skinned node without influences).
    fn primitive(
        &mut self,
        prim: &gltf::Primitive<'_>,
        name: &str,
        bind: &Binding<'_>,
        skel: &ImportedSkeleton,
        (mesh_index, node, skeleton): (usize, usize, usize),
    ) -> Result<Option<ImportedMesh>> {
        let what = format!("mesh '{name}' (node {node})");
        let mode = prim.mode();
        if !matches!(mode, Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan) {
            self.notes.push(format!("{what}: {mode:?} primitive not imported"));
            return Ok(None);
        }
        let Some(pos_acc) = prim.get(&gltf::Semantic::Positions) else {
            self.notes.push(format!("{what}: no POSITION; not imported"));
            return Ok(None);
        };
        let positions = self.read_vec3(&pos_acc, &format!("{what} POSITION"))?;
        let n = positions.len();
        let normals = match prim.get(&gltf::Semantic::Normals) {
            Some(a) => {
                let v = self.read_vec3(&a, &format!("{what} NORMAL"))?;
                self.count_check(&what, n, v.len(), "NORMAL")?;
                v
            }
            None => Vec::new(),
        };
        let uvs = match prim.get(&gltf::Semantic::TexCoords(0)) {
            Some(a) => {
                let d = self.read(
                    &a,
                    &Want {
                        what: format!("{what} TEXCOORD_0"),
                        dims: Dimensions::Vec2,
                        types: FLOAT_OR_NORM,
                    },
                    true,
                )?;
                self.count_check(&what, n, d.len() / 2, "TEXCOORD_0")?;
                d.chunks_exact(2).map(|c| Vec2::new(c[0] as f32, c[1] as f32)).collect()
            }
            None => Vec::new(),
        };
        let indices = self.triangles(prim, mode, n, &what)?;
        if indices.is_empty() {
            self.notes.push(format!("{what}: no triangles; not imported"));
            return Ok(None);
        }
        let Some(Influences {
            joints,
            weights,
            max_influences,
        }) = self.influences(prim, bind, n, &what)?
        else {
            return Ok(None);
        };
        let morph_targets = self.morph_targets(prim, (mesh_index, node), n, &what)?;
        let mut mesh = SkinnedMesh {
            name: name.to_string(),
            positions,
            normals,
            uvs,
            joints,
            weights,
            indices,
            morph_targets,
        };
        mesh.validate(skel.skeleton.joint_count())
            .map_err(|e| asset(&self.file, e))?;
        Ok(Some(ImportedMesh {
            mesh_index,
            primitive: prim.index(),
            node,
            skeleton,
            mesh,
            max_influences,
        }))
    }

    /// An error unless attribute `attr` of mesh `what` has as many elements (`len`) as its
    /// POSITION (`n`).
    fn count_check(&self, what: &str, n: usize, len: usize, attr: &str) -> Result<()> {
        if len != n {
            return Err(self.err(format!("{what}: {attr} has {len} elements but POSITION has {n}")));
        }
        Ok(())
    }

    /// The triangles of a primitive of `n` vertices, three indices each: its indices (checked) or
    /// every vertex in order, strips and fans unrolled, an incomplete last triangle dropped.
    fn triangles(&mut self, prim: &gltf::Primitive<'_>, mode: Mode, n: usize, what: &str) -> Result<Vec<u32>> {
        let raw_indices: Vec<u32> = match prim.indices() {
            Some(a) => {
                let d = self.read(
                    &a,
                    &Want {
                        what: format!("{what} indices"),
                        dims: Dimensions::Scalar,
                        types: UINTS,
                    },
                    false,
                )?;
                let mut v = Vec::with_capacity(d.len());
                for (k, x) in d.into_iter().enumerate() {
                    if x as usize >= n {
                        return Err(self.err(format!("{what}: indices[{k}] is {x}, out of range (0..{n})")));
                    }
                    v.push(x as u32);
                }
                v
            }
            None => (0..n as u32).collect(),
        };
        let indices = match mode {
            Mode::TriangleStrip => {
                let mut v = Vec::new();
                for k in 0..raw_indices.len().saturating_sub(2) {
                    let (a, b, c) = (raw_indices[k], raw_indices[k + 1], raw_indices[k + 2]);
                    if k % 2 == 0 {
                        v.extend([a, b, c]);
                    } else {
                        v.extend([b, a, c]);
                    }
                }
                v
            }
            Mode::TriangleFan => {
                let mut v = Vec::new();
                for k in 1..raw_indices.len().saturating_sub(1) {
                    v.extend([raw_indices[0], raw_indices[k], raw_indices[k + 1]]);
                }
                v
            }
            _ => {
                let whole = raw_indices.len() / 3 * 3;
                if whole != raw_indices.len() {
                    self.notes.push(format!(
                        "{what}: {} trailing indices of an incomplete triangle dropped",
                        raw_indices.len() - whole
                    ));
                }
                raw_indices[..whole].to_vec()
            }
        };
        Ok(indices)
    }

    /// Each vertex's joints and weights: its node's joint with weight 1 when bound rigidly; else
    /// the skin's joints, repeated ones merged, the four largest kept. `None`, with a note, for a
    /// skinned node without JOINTS_0/WEIGHTS_0.
    fn influences(
        &mut self,
        prim: &gltf::Primitive<'_>,
        bind: &Binding<'_>,
        n: usize,
        what: &str,
    ) -> Result<Option<Influences>> {
        let mut joints = vec![[0u16; 4]; n];
        let mut weights = vec![[0f32; 4]; n];
        let mut max_influences = 1;
        match bind {
            Binding::Rigid(j) => {
                let j = u16::try_from(*j).map_err(|_| self.err(format!("{what}: joint index too large")))?;
                joints.iter_mut().for_each(|x| *x = [j, 0, 0, 0]);
                weights.iter_mut().for_each(|w| *w = [1.0, 0.0, 0.0, 0.0]);
            }
            Binding::Skin(skin_joints) => {
                let sets = self.influence_sets(prim, n, what)?;
                if sets.is_empty() {
                    self.notes
                        .push(format!("{what}: skinned node without JOINTS_0/WEIGHTS_0; not imported"));
                    return Ok(None);
                }
                let (mut cut, mut empty) = (0usize, 0usize);
                let mut inf: Vec<(f64, usize)> = Vec::new();
                for v in 0..n {
                    inf.clear();
                    for (j, w) in &sets {
                        for k in 0..4 {
                            let (jj, ww) = (j[4 * v + k], w[4 * v + k]);
                            if ww < 0.0 {
                                return Err(self.err(format!("{what}: vertex {v} has a negative weight {ww}")));
                            }
                            if ww > 0.0 {
                                let sj = skin_joints.get(jj as usize).copied().ok_or_else(|| {
                                    self.err(format!(
                                        "{what}: vertex {v} uses skin joint {jj}, but the skin has {} joints",
                                        skin_joints.len()
                                    ))
                                })?;
                                // Merge repeated joints.
                                match inf.iter_mut().find(|(_, j)| *j == sj) {
                                    Some(e) => e.0 += ww,
                                    None => inf.push((ww, sj)),
                                }
                            }
                        }
                    }
                    max_influences = max_influences.max(inf.len());
                    if inf.is_empty() {
                        empty += 1;
                        inf.push((1.0, skin_joints.first().copied().unwrap_or(0)));
                    }
                    if inf.len() > MAX_INFLUENCES {
                        cut += 1;
                        inf.sort_by(|a, b| b.0.total_cmp(&a.0));
                        inf.truncate(MAX_INFLUENCES);
                    }
                    for (k, &(w, j)) in inf.iter().enumerate() {
                        joints[v][k] =
                            u16::try_from(j).map_err(|_| self.err(format!("{what}: joint index too large")))?;
                        weights[v][k] = w as f32;
                    }
                }
                if cut > 0 {
                    self.notes.push(format!(
                        "{what}: {cut} vertices had more than {MAX_INFLUENCES} influences; kept the four largest and renormalized"
                    ));
                }
                if empty > 0 {
                    self.notes.push(format!(
                        "{what}: {empty} vertices had no weight; bound to the skin's first joint"
                    ));
                }
            }
        }
        Ok(Some(Influences {
            joints,
            weights,
            max_influences,
        }))
    }

    /// The JOINTS_n/WEIGHTS_n pairs of a primitive of `n` vertices, from set 0 to the first
    /// missing one.
    fn influence_sets(&self, prim: &gltf::Primitive<'_>, n: usize, what: &str) -> Result<Vec<(Vec<f64>, Vec<f64>)>> {
        let mut sets: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
        let mut set = 0;
        while let (Some(ja), Some(wa)) = (
            prim.get(&gltf::Semantic::Joints(set)),
            prim.get(&gltf::Semantic::Weights(set)),
        ) {
            let j = self.read(
                &ja,
                &Want {
                    what: format!("{what} JOINTS_{set}"),
                    dims: Dimensions::Vec4,
                    types: JOINT_TYPES,
                },
                false,
            )?;
            let w = self.read(
                &wa,
                &Want {
                    what: format!("{what} WEIGHTS_{set}"),
                    dims: Dimensions::Vec4,
                    types: FLOAT_OR_NORM,
                },
                true,
            )?;
            self.count_check(what, n, j.len() / 4, &format!("JOINTS_{set}"))?;
            self.count_check(what, n, w.len() / 4, &format!("WEIGHTS_{set}"))?;
            sets.push((j, w));
            set += 1;
        }
        Ok(sets)
    }

    /// The morph targets of a primitive of `n` vertices of mesh `mesh_index` on node `node`:
    /// position, normal and tangent displacements (sparse accessors read as the accessor reader
    /// fills them in; a target without an attribute moves nothing in it), named by the mesh's
    /// `extras.targetNames`, with the default weights glTF gives the node: its own `weights`,
    /// else the mesh's, else none (all 0); checked (non-finite or far displacements, more
    /// default weights than targets are errors naming the mesh and the target).
    fn morph_targets(
        &mut self,
        prim: &gltf::Primitive<'_>,
        (mesh_index, node): (usize, usize),
        n: usize,
        what: &str,
    ) -> Result<MorphTargets> {
        let mesh = self.doc.meshes().nth(mesh_index);
        let names: Vec<String> = mesh
            .as_ref()
            .and_then(|m| m.extras().as_ref().map(|raw| raw.get().to_owned()))
            .and_then(|raw| serde_json::from_str::<serde_json::Value>(&raw).ok())
            .and_then(|v| {
                v.get("targetNames")?
                    .as_array()
                    .map(|a| a.iter().map(|s| s.as_str().unwrap_or_default().to_owned()).collect())
            })
            .unwrap_or_default();
        let mut targets = Vec::new();
        for (t, target) in prim.morph_targets().enumerate() {
            let read = |a: Option<gltf::Accessor<'_>>, attr: &str| -> Result<Vec<glam::Vec3>> {
                let Some(a) = a else { return Ok(Vec::new()) };
                let d = self.read_vec3(&a, &format!("{what} morph target {t} {attr}"))?;
                self.count_check(what, n, d.len(), &format!("morph target {t} {attr}"))?;
                Ok(d)
            };
            let positions = read(target.positions(), "POSITION")?;
            let normals = read(target.normals(), "NORMAL")?;
            let tangents = read(target.tangents(), "TANGENT")?;
            let name = names
                .get(t)
                .filter(|s| !s.is_empty())
                .cloned()
                .unwrap_or_else(|| format!("target_{t}"));
            targets.push(MorphTarget::from_dense(name, &positions, &normals, &tangents));
        }
        let morph_targets = MorphTargets {
            mesh: what.to_owned(),
            targets,
            default_weights: self
                .doc
                .nodes()
                .nth(node)
                .and_then(|n| n.weights())
                .or_else(|| mesh.and_then(|m| m.weights()))
                .map(<[f32]>::to_vec)
                .unwrap_or_default(),
        };
        if !morph_targets.targets.is_empty() {
            let set = morph_targets.build(n).map_err(|e| asset(&self.file, e))?;
            self.notes.push(format!(
                "{what}: {} morph target(s), {} vertex displacements stored of {} dense",
                morph_targets.targets.len(),
                set.entry_count(),
                morph_targets.targets.len() * n
            ));
        }
        Ok(morph_targets)
    }
}

/// The joints and weights of each vertex of a primitive.
struct Influences {
    joints: Vec<[u16; 4]>,
    weights: Vec<[f32; 4]>,
    /// The largest number of non-zero influences of any vertex (before any were cut).
    max_influences: usize,
}

/// How a mesh node's primitives are bound to the skeleton.
enum Binding<'a> {
    /// Skinned, with the skeleton joint of each skin joint ([`ImportedSkeleton::skin_joints`]).
    Skin(&'a [usize]),
    /// Rigid: every vertex follows this joint with weight 1.
    Rigid(usize),
}
