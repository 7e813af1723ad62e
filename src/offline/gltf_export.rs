//! glTF 2.0 out: a skeleton, its skinned meshes (with their morph targets) and its clips as one
//! binary `.glb`, which [`gltf_import`](super::gltf_import) reads back to the same skeleton,
//! meshes and samples.
//!
//! - Each joint is a node with its rest translation, rotation and scale; the skin lists every
//!   joint in the skeleton's order with its inverse bind matrix.
//! - Each mesh is a node of its own at the scene's top, skinned by that skin: positions,
//!   normals and uvs where the mesh has them, `JOINTS_0` and `WEIGHTS_0`, 32-bit indices, and its
//!   morph targets (position and normal deltas, names in `extras.targetNames`, default weights).
//! - Each clip is an animation: a sampler and a channel per track, its interpolation kept (a
//!   clip without tracks, the first joint's rest held over its length), and its morph-weight
//!   tracks as a `weights` channel on each mesh node with at least as many targets (glTF keys a
//!   mesh's weights together: at every driven track's keys, exact where the tracks share linear
//!   or step keys, else each span cut in four and keyed linearly; a target the clip does not
//!   drive holds the mesh's default weight). Events and float curves have no place in glTF and
//!   are not written.
//!
//! ```
//! use wgpu_anim::mannequin;
//! use wgpu_anim::offline::{gltf_export, gltf_import};
//!
//! let skeleton = mannequin::skeleton();
//! let clips = mannequin::clips(&skeleton);
//! let glb = gltf_export::to_glb(&skeleton, &[mannequin::mesh(&skeleton)], &clips)?;
//! let back = gltf_import::load_slice(&glb, "mannequin.glb", None)?;
//! assert_eq!(back.skeletons[0].skeleton.joint_count(), skeleton.joint_count());
//! assert_eq!(back.skeletons[0].clips.len(), clips.len());
//! # Ok::<(), wgpu_anim::Error>(())
//! ```

use crate::clip::{Clip, Interpolation, Track};
use crate::error::{Error, Result};
use crate::mesh::SkinnedMesh;
use crate::skeleton::Skeleton;
use glam::{Quat, Vec3};
use serde_json::{Value, json};
use std::path::Path;

const FLOAT: u32 = 5126;
const UNSIGNED_SHORT: u32 = 5123;
const UNSIGNED_INT: u32 = 5125;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;

/// The binary chunk and the buffer views and accessors that describe it.
#[derive(Default)]
struct Blob {
    bytes: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Blob {
    /// Appends `data` as a buffer view (4-byte aligned) and an accessor over it; returns the
    /// accessor's index. `bounds` adds its `min` and `max` (glTF requires them on positions and
    /// animation inputs).
    fn accessor(&mut self, data: &[f32], kind: &str, width: usize, target: Option<u32>, bounds: bool) -> usize {
        let raw: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut a = self.view_accessor(&raw, FLOAT, kind, data.len() / width.max(1), target);
        if bounds && width > 0 && !data.is_empty() {
            let (mut lo, mut hi) = (vec![f32::INFINITY; width], vec![f32::NEG_INFINITY; width]);
            for chunk in data.chunks(width) {
                for (k, &v) in chunk.iter().enumerate() {
                    lo[k] = lo[k].min(v);
                    hi[k] = hi[k].max(v);
                }
            }
            a["min"] = json!(lo);
            a["max"] = json!(hi);
        }
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    fn raw_accessor(&mut self, raw: &[u8], component: u32, kind: &str, count: usize, target: Option<u32>) -> usize {
        let a = self.view_accessor(raw, component, kind, count, target);
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    fn view_accessor(&mut self, raw: &[u8], component: u32, kind: &str, count: usize, target: Option<u32>) -> Value {
        let offset = self.bytes.len();
        self.bytes.extend_from_slice(raw);
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
        let mut view = json!({ "buffer": 0, "byteOffset": offset, "byteLength": raw.len() });
        if let Some(t) = target {
            view["target"] = json!(t);
        }
        self.views.push(view);
        json!({ "bufferView": self.views.len() - 1, "componentType": component, "count": count, "type": kind })
    }
}

fn flat3(v: &[Vec3]) -> Vec<f32> {
    v.iter().flat_map(|p| p.to_array()).collect()
}

fn interpolation_name(i: Interpolation) -> &'static str {
    match i {
        Interpolation::Step => "STEP",
        Interpolation::Linear => "LINEAR",
        Interpolation::CubicSpline => "CUBICSPLINE",
    }
}

/// Writes `skeleton`, `meshes` (each bound to `skeleton`: its joint indices are the skeleton's)
/// and `clips` (of `skeleton`) as a GLB file's bytes.
///
/// Meshes are written as [`SkinnedMesh::validate`] leaves them (weights normalized, missing
/// normals and uvs filled in).
///
/// # Errors
/// [`Error::Clip`], [`Error::Track`] or [`Error::Mesh`] when a clip or a mesh does not validate
/// against `skeleton`; nothing is written.
pub fn to_glb(skeleton: &Skeleton, meshes: &[SkinnedMesh], clips: &[Clip]) -> Result<Vec<u8>> {
    for clip in clips {
        clip.validate(skeleton)?;
    }
    let joints = skeleton.joint_count();
    let mut checked = Vec::with_capacity(meshes.len());
    for mesh in meshes {
        // Lengths, indices, weights, morph targets: as a library checks them. A joint of weight
        // 0 may name anything there; glTF's skin may not, so it is written as joint 0.
        let mut m = mesh.clone();
        m.validate(joints)?;
        for (js, ws) in m.joints.iter_mut().zip(&m.weights) {
            for (j, &w) in js.iter_mut().zip(ws) {
                if w == 0.0 {
                    *j = 0;
                }
            }
        }
        checked.push(m);
    }
    let meshes = checked.as_slice();
    let mut blob = Blob::default();
    let mut nodes: Vec<Value> = Vec::new();
    let mut top: Vec<usize> = Vec::new();
    for j in 0..joints {
        let rest = skeleton.rest_pose()[j];
        let children: Vec<usize> = (0..joints)
            .filter(|&c| skeleton.parents()[c] == Some(j as u32))
            .collect();
        let mut node = json!({
            "name": skeleton.joint_names()[j],
            "translation": rest.translation.to_array(),
            "rotation": rest.rotation.normalize().to_array(),
            "scale": rest.scale.to_array(),
        });
        if !children.is_empty() {
            node["children"] = json!(children);
        }
        nodes.push(node);
        if skeleton.parents()[j].is_none() {
            top.push(j);
        }
    }
    let binds: Vec<f32> = skeleton
        .inverse_binds()
        .iter()
        .flat_map(|m| m.to_cols_array())
        .collect();
    let binds = blob.accessor(&binds, "MAT4", 16, None, false);
    let skin =
        json!({ "name": skeleton.name(), "joints": (0..joints).collect::<Vec<_>>(), "inverseBindMatrices": binds });
    let mut gltf_meshes = Vec::new();
    for (m, mesh) in meshes.iter().enumerate() {
        gltf_meshes.push(mesh_json(&mut blob, mesh));
        nodes.push(json!({ "name": mesh.name, "mesh": m, "skin": 0 }));
        top.push(nodes.len() - 1);
    }
    let animations: Vec<Value> = clips
        .iter()
        .map(|c| animation_json(&mut blob, skeleton, meshes, c))
        .collect();
    let mut doc = json!({
        "asset": { "version": "2.0", "generator": concat!("wgpu-anim ", env!("CARGO_PKG_VERSION")) },
        "scene": 0,
        "scenes": [{ "name": skeleton.name(), "nodes": top }],
        "nodes": nodes,
        "skins": [skin],
    });
    if !gltf_meshes.is_empty() {
        doc["meshes"] = json!(gltf_meshes);
    }
    if !animations.is_empty() {
        doc["animations"] = json!(animations);
    }
    doc["buffers"] = json!([{ "byteLength": blob.bytes.len() }]);
    doc["bufferViews"] = json!(blob.views);
    doc["accessors"] = json!(blob.accessors);
    Ok(glb(&doc, blob.bytes))
}

/// Writes [`to_glb`]'s bytes to `path`.
///
/// # Errors
/// As [`to_glb`], and [`Error::Asset`] naming the file when it cannot be written.
pub fn write_glb(path: &Path, skeleton: &Skeleton, meshes: &[SkinnedMesh], clips: &[Clip]) -> Result<()> {
    let bytes = to_glb(skeleton, meshes, clips)?;
    std::fs::write(path, bytes).map_err(|e| Error::Asset {
        file: path.display().to_string(),
        what: format!("cannot be written: {e}"),
    })
}

fn mesh_json(blob: &mut Blob, mesh: &SkinnedMesh) -> Value {
    let n = mesh.positions.len();
    let mut attributes =
        json!({ "POSITION": blob.accessor(&flat3(&mesh.positions), "VEC3", 3, Some(ARRAY_BUFFER), true) });
    if mesh.normals.len() == n && n > 0 {
        attributes["NORMAL"] = json!(blob.accessor(&flat3(&mesh.normals), "VEC3", 3, Some(ARRAY_BUFFER), false));
    }
    if mesh.uvs.len() == n && n > 0 {
        let uvs: Vec<f32> = mesh.uvs.iter().flat_map(|u| u.to_array()).collect();
        attributes["TEXCOORD_0"] = json!(blob.accessor(&uvs, "VEC2", 2, Some(ARRAY_BUFFER), false));
    }
    let joints: Vec<u8> = mesh.joints.iter().flatten().flat_map(|j| j.to_le_bytes()).collect();
    attributes["JOINTS_0"] =
        json!(blob.raw_accessor(&joints, UNSIGNED_SHORT, "VEC4", mesh.joints.len(), Some(ARRAY_BUFFER)));
    let weights: Vec<f32> = mesh.weights.iter().flatten().copied().collect();
    attributes["WEIGHTS_0"] = json!(blob.accessor(&weights, "VEC4", 4, Some(ARRAY_BUFFER), false));
    let indices: Vec<u8> = mesh.indices.iter().flat_map(|i| i.to_le_bytes()).collect();
    let indices = blob.raw_accessor(
        &indices,
        UNSIGNED_INT,
        "SCALAR",
        mesh.indices.len(),
        Some(ELEMENT_ARRAY_BUFFER),
    );
    let mut primitive = json!({ "attributes": attributes, "indices": indices, "mode": 4 });
    let morph = &mesh.morph_targets;
    let mut out = json!({ "name": mesh.name });
    if !morph.targets.is_empty() {
        let with_normals = morph
            .targets
            .iter()
            .any(|t| t.deltas.iter().any(|d| d.normal != Vec3::ZERO));
        let targets: Vec<Value> = morph
            .targets
            .iter()
            .map(|t| {
                let (mut p, mut q) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                for d in t.deltas.iter().filter(|d| (d.vertex as usize) < n) {
                    p[d.vertex as usize] = d.position;
                    q[d.vertex as usize] = d.normal;
                }
                let mut target = json!({ "POSITION": blob.accessor(&flat3(&p), "VEC3", 3, Some(ARRAY_BUFFER), true) });
                if with_normals {
                    target["NORMAL"] = json!(blob.accessor(&flat3(&q), "VEC3", 3, Some(ARRAY_BUFFER), false));
                }
                target
            })
            .collect();
        primitive["targets"] = json!(targets);
        let names: Vec<&str> = morph.targets.iter().map(|t| t.name.as_str()).collect();
        out["extras"] = json!({ "targetNames": names });
        if morph.default_weights.len() == morph.targets.len() {
            out["weights"] = json!(morph.default_weights);
        }
    }
    out["primitives"] = json!([primitive]);
    out
}

/// Clip `clip` as an animation: its joint tracks on the joints' nodes (0 to the joint count) and
/// its morph weights on the nodes of `meshes` (which follow the joints').
fn animation_json(blob: &mut Blob, skeleton: &Skeleton, meshes: &[SkinnedMesh], clip: &Clip) -> Value {
    let mut samplers = Vec::new();
    let mut channels = Vec::new();
    let mut add = |blob: &mut Blob,
                   node: usize,
                   path: &str,
                   interpolation: Interpolation,
                   times: &[f32],
                   values: Vec<f32>,
                   width: usize| {
        let input = blob.accessor(times, "SCALAR", 1, None, true);
        let kind = match width {
            4 => "VEC4",
            3 => "VEC3",
            _ => "SCALAR",
        };
        let output = blob.accessor(&values, kind, width, None, false);
        samplers.push(json!({ "input": input, "output": output, "interpolation": interpolation_name(interpolation) }));
        channels.push(json!({ "sampler": samplers.len() - 1, "target": { "node": node, "path": path } }));
    };
    let mut written = false;
    for track in &clip.tracks {
        let Some(node) = skeleton.joint_index(&track.joint) else {
            continue;
        };
        let vec3 = |t: &Track<Vec3>| flat3(&t.values);
        if let Some(t) = track.translation.as_ref().filter(|t| !t.times.is_empty()) {
            add(blob, node, "translation", t.interpolation, &t.times, vec3(t), 3);
            written = true;
        }
        if let Some(t) = track.rotation.as_ref().filter(|t| !t.times.is_empty()) {
            let values = t.values.iter().flat_map(|q: &Quat| q.to_array()).collect();
            add(blob, node, "rotation", t.interpolation, &t.times, values, 4);
            written = true;
        }
        if let Some(t) = track.scale.as_ref().filter(|t| !t.times.is_empty()) {
            add(blob, node, "scale", t.interpolation, &t.times, vec3(t), 3);
            written = true;
        }
    }
    for (m, mesh) in meshes.iter().enumerate() {
        let targets = &mesh.morph_targets;
        if let Some((interpolation, times, values)) =
            morph::weights_keys(clip, targets.targets.len(), &targets.default_weights)
        {
            add(
                blob,
                skeleton.joint_count() + m,
                "weights",
                interpolation,
                &times,
                values,
                1,
            );
            written = true;
        }
    }
    if !written {
        // glTF has no animation without a channel: a clip of no tracks (the rest pose) keeps its
        // name and length as the first joint's rest rotation, held from 0 to its end.
        let rotation = skeleton
            .rest_pose()
            .first()
            .map_or(Quat::IDENTITY, |r| r.rotation.normalize());
        let times: Vec<f32> = if clip.duration > 0.0 {
            vec![0.0, clip.duration]
        } else {
            vec![0.0]
        };
        let values = times.iter().flat_map(|_| rotation.to_array()).collect();
        add(blob, 0, "rotation", Interpolation::Step, &times, values, 4);
    }
    json!({ "name": clip.name, "samplers": samplers, "channels": channels })
}

/// A GLB container: the JSON chunk padded with spaces, the binary chunk with zeros.
fn glb(doc: &Value, mut bin: Vec<u8>) -> Vec<u8> {
    let mut text = doc.to_string().into_bytes();
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let total = 12 + 8 + text.len() + if bin.is_empty() { 0 } else { 8 + bin.len() };
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    if !bin.is_empty() {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
    }
    out
}

mod morph;
