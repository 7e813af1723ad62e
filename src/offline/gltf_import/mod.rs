//! glTF 2.0 import: skins become [`Skeleton`]s, animations become [`Clip`]s, skinned primitives
//! become [`SkinnedMesh`]es.
//!
//! - **Skins.** Each skin becomes one skeleton holding the skin's joints *and every ancestor node of
//!   them up to the scene root*, so that model space is glTF world space (the scene root is the
//!   identity). Ancestors that are not skin joints get an identity inverse bind matrix.
//!   [`ImportedSkeleton::skin_joints`] maps skin joint indices to skeleton joints.
//! - **Unskinned files** (no skins): every node of the scene becomes a joint of one skeleton and
//!   every mesh node a rigid part bound with weight 1 to its own joint (rigid hierarchical
//!   animation).
//! - **Animations.** One [`Clip`] per animation and skeleton; STEP, LINEAR and CUBICSPLINE map
//!   one to one, key times are kept, the duration is the animation's last key time and clips do
//!   not loop. Morph-target weight channels are read and reported, not applied.
//! - **Meshes.** Positions, normals (computed when missing), texture coordinates 0, joints and
//!   weights in every allowed component type, indices (generated when absent). More than four
//!   influences are cut to the four largest. A skinned mesh node's own transform is ignored, as
//!   glTF requires.
//!
//! Every index is checked before it is followed and every accessor is bounds- and type-checked
//! before it is read: a malformed file gives an [`Error::Asset`] naming the file, never a panic.
//! Counts are checked against the bytes that are really there, and against [`LoadOptions`]'
//! limits, before anything is allocated. External buffers are read only from inside the file's
//! folder unless [`LoadOptions::external`] says otherwise. Everything the importer fixed or
//! dropped is listed in [`Imported::notes`].

use crate::clip::{Clip, Interpolation};
use crate::error::{Error, Result};
use crate::library::{AnimationLibrary, ClipId, SkeletonId};
use crate::mesh::SkinnedMesh;
use crate::offline::LibraryBuilder;
use crate::skeleton::Skeleton;
use glam::{DMat4, DVec3, Vec3};
use std::path::{Path, PathBuf};

mod accessors;
mod animations;
mod checks;
mod files;
mod meshes;
mod scene;
mod skins;

use checks::{check_extension_objects, check_indices};
use files::{load_buffers, read_limited};

/// Everything imported from one glTF file.
#[derive(Clone, Debug, Default)]
pub struct Imported {
    /// The file, as given (used in messages).
    pub file: String,
    /// One skeleton per skin, or one skeleton of all scene nodes when the file has no skin.
    pub skeletons: Vec<ImportedSkeleton>,
    /// Every imported primitive, bound to one of [`Imported::skeletons`].
    pub meshes: Vec<ImportedMesh>,
    /// A summary of every animation of the file, in file order (including channels that were not
    /// imported).
    pub animations: Vec<AnimationInfo>,
    /// Everything that was fixed, dropped or not applied, one line each.
    pub notes: Vec<String>,
}

/// A skeleton made from a skin (or from the whole scene of an unskinned file) and its clips.
#[derive(Clone, Debug)]
pub struct ImportedSkeleton {
    /// The skeleton, joints parents-first.
    pub skeleton: Skeleton,
    /// The glTF skin it was made from; `None` for the rigid hierarchy of an unskinned file.
    pub skin: Option<usize>,
    /// Skin joint `i` is skeleton joint `skin_joints[i]` (empty when `skin` is `None`).
    pub skin_joints: Vec<usize>,
    /// The glTF node index of each skeleton joint.
    pub joint_nodes: Vec<usize>,
    /// Clips of this skeleton, each with the index of the glTF animation it came from.
    pub clips: Vec<ImportedClip>,
}

impl ImportedSkeleton {
    /// The skeleton joint of glTF node `node`, if the node belongs to this skeleton.
    #[must_use]
    pub fn joint_of_node(&self, node: usize) -> Option<usize> {
        self.joint_nodes.iter().position(|&n| n == node)
    }

    /// The position in [`ImportedSkeleton::clips`] of the clip made from glTF animation
    /// `animation`.
    #[must_use]
    pub fn clip_of_animation(&self, animation: usize) -> Option<usize> {
        self.clips.iter().position(|c| c.animation == animation)
    }
}

/// A clip and the glTF animation it came from.
#[derive(Clone, Debug)]
pub struct ImportedClip {
    /// Index of the animation in the file's `animations`.
    pub animation: usize,
    /// The clip (joint names are the skeleton's).
    pub clip: Clip,
}

/// One imported primitive.
#[derive(Clone, Debug)]
pub struct ImportedMesh {
    /// The glTF mesh index.
    pub mesh_index: usize,
    /// The primitive index within the mesh.
    pub primitive: usize,
    /// The node that instantiates it.
    pub node: usize,
    /// Index into [`Imported::skeletons`] of the skeleton it is bound to.
    pub skeleton: usize,
    /// The mesh, validated against its skeleton; joint indices are skeleton joints and weights are
    /// normalized.
    pub mesh: SkinnedMesh,
    /// The largest number of non-zero influences of any vertex in the file (before any were cut).
    pub max_influences: usize,
    /// Morph targets (read, not applied).
    pub morph_targets: Vec<MorphTarget>,
}

/// Displacements of one morph target.
#[derive(Clone, Debug, Default)]
pub struct MorphTarget {
    /// Position displacements, one per vertex (empty when absent).
    pub positions: Vec<Vec3>,
    /// Normal displacements, one per vertex (empty when absent).
    pub normals: Vec<Vec3>,
}

/// What a channel animates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelPath {
    /// Node translation.
    Translation,
    /// Node rotation.
    Rotation,
    /// Node scale.
    Scale,
    /// Morph-target weights (reported, not applied).
    Weights,
}

impl std::fmt::Display for ChannelPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ChannelPath::Translation => "translation",
            ChannelPath::Rotation => "rotation",
            ChannelPath::Scale => "scale",
            ChannelPath::Weights => "weights",
        })
    }
}

/// One channel of a glTF animation.
#[derive(Clone, Debug)]
pub struct ChannelInfo {
    /// Target node.
    pub node: usize,
    /// Target property.
    pub path: ChannelPath,
    /// Interpolation.
    pub interpolation: Interpolation,
    /// Number of keys.
    pub keys: usize,
    /// Whether it was imported into a clip.
    pub imported: bool,
}

/// A summary of one glTF animation.
#[derive(Clone, Debug)]
pub struct AnimationInfo {
    /// Name (or `animation_<index>`).
    pub name: String,
    /// Earliest key time, seconds.
    pub first_key: f32,
    /// Last key time, seconds.
    pub duration: f32,
    /// Its channels.
    pub channels: Vec<ChannelInfo>,
}

/// A library built from an [`Imported`] file, with the ids of what it holds.
#[derive(Clone, Debug)]
pub struct ImportedLibrary {
    /// The library.
    pub library: AnimationLibrary,
    /// The id of each of [`Imported::skeletons`].
    pub skeletons: Vec<SkeletonId>,
    /// Per skeleton, the id of each of its [`ImportedSkeleton::clips`].
    pub clips: Vec<Vec<ClipId>>,
}

/// Where [`Imported::build_library_with`] takes clips from.
#[derive(Clone, Debug)]
pub enum ClipSource {
    /// The file's clips, raw.
    Raw,
    /// The file's clips, compressed with these settings.
    Compress(crate::offline::compress::CompressionSettings),
    /// Clips of a compressed library file, by name, for the skeleton with its joints; the other
    /// clips raw.
    File(crate::offline::compressed_file::CompressedFile),
}

impl Imported {
    /// Validates and packs every skeleton and clip into an [`AnimationLibrary`].
    pub fn build_library(&self) -> Result<ImportedLibrary> {
        self.build_library_with(&ClipSource::Raw)
    }

    /// As [`Imported::build_library`], the clips raw, compressed, or read from a compressed
    /// library file.
    ///
    /// Errors: as [`Imported::build_library`]; with [`ClipSource::File`], a file made for another
    /// skeleton than every one of this file's, or a clip of it the library refuses.
    pub fn build_library_with(&self, source: &ClipSource) -> Result<ImportedLibrary> {
        let mut b = LibraryBuilder::new();
        if let ClipSource::Compress(settings) = source {
            b.set_compression(Some(*settings));
        }
        let mut skeletons = Vec::new();
        let mut clips = Vec::new();
        let mut used_file = false;
        for s in &self.skeletons {
            let id = b.add_skeleton(s.skeleton.clone());
            skeletons.push(id);
            let file = match source {
                ClipSource::File(f) if f.joints.as_slice() == s.skeleton.joint_names() => Some(f),
                _ => None,
            };
            let mut ids = Vec::new();
            for c in &s.clips {
                let compressed = file.and_then(|f| f.clips.iter().find(|k| k.clip.name == c.clip.name));
                let id = match compressed {
                    Some(k) => {
                        used_file = true;
                        b.add_compressed_clip(id, k)
                    }
                    None => b.add_clip(id, &c.clip),
                };
                ids.push(id.map_err(|e| asset(&self.file, e))?);
            }
            clips.push(ids);
        }
        if let ClipSource::File(f) = source
            && !used_file
        {
            return Err(Error::Asset {
                file: self.file.clone(),
                what: format!(
                    "no skeleton with the {} joints of the compressed clips' skeleton '{}' has a clip of theirs",
                    f.joints.len(),
                    f.skeleton
                ),
            });
        }
        Ok(ImportedLibrary {
            library: b.build(),
            skeletons,
            clips,
        })
    }

    /// The skeleton made from glTF skin `skin`.
    #[must_use]
    pub fn skeleton_of_skin(&self, skin: usize) -> Option<usize> {
        self.skeletons.iter().position(|s| s.skin == Some(skin))
    }

    /// The first imported primitive of glTF mesh `mesh`, primitive `primitive`.
    #[must_use]
    pub fn mesh(&self, mesh: usize, primitive: usize) -> Option<&ImportedMesh> {
        self.meshes
            .iter()
            .find(|m| m.mesh_index == mesh && m.primitive == primitive)
    }
}

/// One joint of a [`GltfPose`].
#[derive(Clone, Debug)]
pub struct GltfJoint {
    /// Index in the skin's `joints` (skinned files only).
    pub index: Option<usize>,
    /// The glTF node.
    pub node: usize,
    /// The joint's name in the skeleton.
    pub name: String,
    /// The node's world matrix (model space of the skeleton = glTF world space).
    pub world: DMat4,
}

/// A pose in glTF terms: what the conformance fixtures and `wgpu-anim sample --json` list.
#[derive(Clone, Debug)]
pub struct GltfPose {
    /// Whether the skeleton came from a skin.
    pub skinned: bool,
    /// Skin joints in skin order when skinned, else every skeleton joint in node order.
    pub joints: Vec<GltfJoint>,
    /// Per skin joint: world × inverse bind (empty when unskinned).
    pub skin_matrices: Vec<DMat4>,
    /// Skinned positions of every vertex of mesh 0, primitive 0 when it is bound to this skeleton
    /// and the skeleton is skinned (empty otherwise).
    pub vertices: Vec<DVec3>,
}

impl Imported {
    /// The skeleton the fixtures describe: the first skin's, or the scene's when unskinned.
    #[must_use]
    pub fn primary_skeleton(&self) -> Option<usize> {
        self.skeleton_of_skin(0)
            .or_else(|| (!self.skeletons.is_empty()).then_some(0))
    }

    /// Maps a pose of skeleton `skeleton` (its model matrices and palette, in skeleton joint
    /// order) to glTF terms: joints in skin order (or node order), skin matrices, and the skinned
    /// vertices of mesh 0, primitive 0.
    pub fn gltf_pose(&self, skeleton: usize, model: &[DMat4], palette: &[DMat4]) -> Result<GltfPose> {
        let s = self
            .skeletons
            .get(skeleton)
            .ok_or_else(|| asset(&self.file, format!("no skeleton {skeleton}")))?;
        let n = s.skeleton.joint_count();
        if model.len() != n || palette.len() != n {
            return Err(asset(
                &self.file,
                format!(
                    "pose has {} model and {} palette matrices for {n} joints",
                    model.len(),
                    palette.len()
                ),
            ));
        }
        let names = s.skeleton.joint_names();
        let skinned = s.skin.is_some();
        let joints: Vec<GltfJoint> = if skinned {
            s.skin_joints
                .iter()
                .enumerate()
                .map(|(i, &j)| GltfJoint {
                    index: Some(i),
                    node: s.joint_nodes[j],
                    name: names[j].clone(),
                    world: model[j],
                })
                .collect()
        } else {
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by_key(|&j| s.joint_nodes[j]);
            order
                .into_iter()
                .map(|j| GltfJoint {
                    index: None,
                    node: s.joint_nodes[j],
                    name: names[j].clone(),
                    world: model[j],
                })
                .collect()
        };
        let skin_matrices = s.skin_joints.iter().map(|&j| palette[j]).collect();
        let vertices = match self.mesh(0, 0) {
            Some(m) if skinned && m.skeleton == skeleton => crate::reference::skin(&m.mesh, palette),
            _ => Vec::new(),
        };
        Ok(GltfPose {
            skinned,
            joints,
            skin_matrices,
            vertices,
        })
    }
}

/// Which external files (a buffer's `"uri": "scene.bin"`) the importer may read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExternalFiles {
    /// Only files inside the glTF file's folder or its subfolders: no absolute path, no `..` that
    /// leaves the folder, no symbolic link that points out of it. The default, for files from
    /// anywhere (mods, uploads, whatever is dropped on an editor). Every subfolder counts: a file
    /// in a home folder can still name any file below it, so keep untrusted files in a folder of
    /// their own.
    #[default]
    InFolder,
    /// Any path: relative to the file's folder, or absolute. For files you trust. Without a folder
    /// (`load_slice` with no base), only absolute paths.
    Anywhere,
    /// None: only a GLB's own binary chunk and `data:` URIs.
    Never,
}

/// What [`load_with`] and [`load_slice_with`] accept. The defaults ([`LoadOptions::default`]) suit
/// untrusted files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// Which external files may be read (default: [`ExternalFiles::InFolder`]).
    pub external: ExternalFiles,
    /// The largest decoded `data:` URI, in bytes (default 256 MiB).
    pub max_data_uri_bytes: usize,
    /// The most bytes the file and its buffers may hold: the file itself, and all its buffers
    /// together (default 1 GiB).
    pub max_file_bytes: u64,
    /// The most values (elements × components) the import may read from accessors, all together;
    /// checked before each accessor is read (default 2^26, 512 MiB as the importer's f64s).
    /// Accessors backed by buffer views are also bounded by the bytes really in the views; this
    /// bounds sparse accessors without one, and accessors read many times.
    pub max_accessor_values: usize,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            external: ExternalFiles::InFolder,
            max_data_uri_bytes: 256 << 20,
            max_file_bytes: 1 << 30,
            max_accessor_values: 1 << 26,
        }
    }
}

/// Reads a `.gltf` (with its buffers) or `.glb` file, with the default [`LoadOptions`]: external
/// buffers only from inside the file's folder.
pub fn load(path: &Path) -> Result<Imported> {
    load_with(path, &LoadOptions::default())
}

/// As [`load`], with `options`.
pub fn load_with(path: &Path, options: &LoadOptions) -> Result<Imported> {
    let file = path.display().to_string();
    let too_big = |len: u64| Error::Asset {
        file: file.clone(),
        what: format!(
            "{len} bytes is more than the limit of {} (LoadOptions::max_file_bytes)",
            options.max_file_bytes
        ),
    };
    if let Ok(meta) = std::fs::metadata(path)
        && meta.len() > options.max_file_bytes
    {
        return Err(too_big(meta.len()));
    }
    let bytes = read_limited(path, options.max_file_bytes).map_err(|why| Error::Asset {
        file: file.clone(),
        what: format!("cannot read: {why}"),
    })?;
    // The folder external buffers resolve in (the current one for a bare file name).
    let base = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    load_slice_with(&bytes, &file, Some(&base), options)
}

/// Reads glTF or GLB bytes with the default [`LoadOptions`]. `file` names it in messages;
/// external buffers are looked up inside the folder `base` (without one, only embedded and
/// `data:` buffers can be read).
pub fn load_slice(bytes: &[u8], file: &str, base: Option<&Path>) -> Result<Imported> {
    load_slice_with(bytes, file, base, &LoadOptions::default())
}

/// As [`load_slice`], with `options`.
pub fn load_slice_with(bytes: &[u8], file: &str, base: Option<&Path>, options: &LoadOptions) -> Result<Imported> {
    let invalid = |e: gltf::Error| Error::Asset {
        file: file.into(),
        what: format!("not valid glTF: {e}")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    };
    // Parsed, then every index checked, then the `gltf` crate's validation: its validation
    // follows some indices unchecked (a primitive's attributes), so it may not see one first.
    let gltf::Gltf { document, blob } = gltf::Gltf::from_slice_without_validation(bytes).map_err(invalid)?;
    check_extension_objects(bytes, file)?;
    check_indices(document.as_json(), file)?;
    let gltf = gltf::Gltf {
        document: gltf::Document::from_json(document.into_json()).map_err(invalid)?,
        blob,
    };
    let buffers = load_buffers(&gltf, file, base, options)?;
    let mut imp = Importer {
        file: file.into(),
        doc: &gltf.document,
        buffers,
        notes: Vec::new(),
        accessor_values_left: std::cell::Cell::new(options.max_accessor_values),
    };
    imp.run()
}

fn asset(file: &str, e: impl std::fmt::Display) -> Error {
    Error::Asset {
        file: file.into(),
        what: e.to_string(),
    }
}

struct Importer<'a> {
    file: String,
    doc: &'a gltf::Document,
    buffers: Vec<Vec<u8>>,
    notes: Vec<String>,
    /// What is left of [`LoadOptions::max_accessor_values`].
    accessor_values_left: std::cell::Cell<usize>,
}

impl Importer<'_> {
    fn err(&self, what: impl Into<String>) -> Error {
        Error::Asset {
            file: self.file.clone(),
            what: what.into(),
        }
    }

    fn run(&mut self) -> Result<Imported> {
        let doc = self.doc;
        let nodes: Vec<gltf::Node<'_>> = doc.nodes().collect();
        let (parent, in_scene) = self.scene_graph(&nodes)?;
        let mut skeletons = self.skeletons(&nodes, &parent, &in_scene)?;
        let animations = self.animations(&mut skeletons)?;
        let meshes = self.meshes(&nodes, &in_scene, &skeletons)?;
        Ok(Imported {
            file: self.file.clone(),
            skeletons,
            meshes,
            animations,
            notes: std::mem::take(&mut self.notes),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clip::ClipEvent;
    use glam::Mat4;

    fn tiny(json: &str) -> Result<Imported> {
        load_slice(json.as_bytes(), "tiny.gltf", None)
    }

    #[test]
    fn unskinned_nodes_become_one_skeleton_with_unique_names() {
        let imp = tiny(
            r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],
                "nodes":[{"name":"a","children":[1,2]},{"name":"b","translation":[0,1,0]},{"name":"b"}]}"#,
        )
        .unwrap();
        assert_eq!(imp.skeletons.len(), 1);
        let s = &imp.skeletons[0].skeleton;
        assert_eq!(s.joint_names(), ["a", "b", "node_2"]);
        assert_eq!(imp.skeletons[0].joint_nodes, [0, 1, 2]);
    }

    #[test]
    fn cycles_and_bad_buffers_are_errors() {
        let e = tiny(
            r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],
                "nodes":[{"children":[1]},{"children":[0]}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("tiny.gltf: ") && e.contains("twice"), "{e}");
        let e = tiny(
            r#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":8,"uri":"data:application/octet-stream;base64,AAAA"}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("byteLength"), "{e}");
    }

    /// A small skinned file: a root, a chain of five joints (skin lists them in reverse), a mesh
    /// of three vertices with u8 joints, normalized u8 weights and a second influence set, and a
    /// cubic-spline animation. `tweak` edits the bytes and the JSON before loading.
    fn skinned(tweak: impl FnOnce(&mut Vec<u8>, &mut serde_json::Value)) -> Result<Imported> {
        use base64::Engine as _;
        let mut b: Vec<u8> = Vec::new();
        for p in [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]] {
            p.iter().for_each(|x| b.extend(x.to_le_bytes()));
        }
        b.extend([0u8, 1, 0, 0, 1, 0, 0, 0, 0, 1, 2, 3]); // JOINTS_0 @36
        b.extend([255u8, 0, 0, 0, 128, 127, 0, 0, 100, 60, 40, 30]); // WEIGHTS_0 @48
        b.extend([0u8, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0]); // JOINTS_1 @60
        b.extend([0u8, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0]); // WEIGHTS_1 @72
        [0u16, 1, 2].iter().for_each(|x| b.extend(x.to_le_bytes())); // indices @84
        b.extend([0u8, 0]);
        [0.0f32, 1.0].iter().for_each(|x| b.extend(x.to_le_bytes())); // times @92
        for _ in 0..6 {
            [0.0f32, 0.0, 0.0, 1.0].iter().for_each(|x| b.extend(x.to_le_bytes())); // @100
        }
        let mut j = serde_json::json!({
            "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
            "nodes": [
                {"name": "root", "children": [1, 6]},
                {"name": "j1", "children": [2], "translation": [0, 1, 0]},
                {"name": "j2", "children": [3]}, {"name": "j3", "children": [4]},
                {"name": "j4", "children": [5]}, {"name": "j5"},
                {"name": "body", "mesh": 0, "skin": 0, "translation": [9, 9, 9]}
            ],
            "skins": [{"joints": [5, 4, 3, 2, 1]}],
            "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "JOINTS_0": 1,
                "WEIGHTS_0": 2, "JOINTS_1": 3, "WEIGHTS_1": 4}, "indices": 5}]}],
            "animations": [{"name": "bend", "samplers": [
                    {"input": 6, "output": 7, "interpolation": "CUBICSPLINE"},
                    {"input": 6, "output": 8}],
                "channels": [{"sampler": 0, "target": {"node": 2, "path": "rotation"}},
                    {"sampler": 1, "target": {"node": 6, "path": "translation"}}]}],
            "accessors": [
                {"bufferView": 0, "byteOffset": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                 "min": [0, 0, 0], "max": [1, 1, 0]},
                {"bufferView": 0, "byteOffset": 36, "componentType": 5121, "count": 3, "type": "VEC4"},
                {"bufferView": 0, "byteOffset": 48, "componentType": 5121, "normalized": true, "count": 3, "type": "VEC4"},
                {"bufferView": 0, "byteOffset": 60, "componentType": 5121, "count": 3, "type": "VEC4"},
                {"bufferView": 0, "byteOffset": 72, "componentType": 5121, "normalized": true, "count": 3, "type": "VEC4"},
                {"bufferView": 0, "byteOffset": 84, "componentType": 5123, "count": 3, "type": "SCALAR"},
                {"bufferView": 0, "byteOffset": 92, "componentType": 5126, "count": 2, "type": "SCALAR",
                 "min": [0], "max": [1]},
                {"bufferView": 0, "byteOffset": 100, "componentType": 5126, "count": 6, "type": "VEC4"},
                {"bufferView": 0, "byteOffset": 0, "componentType": 5126, "count": 2, "type": "VEC3"}
            ],
            "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 196}],
            "buffers": [{"byteLength": 196}]
        });
        tweak(&mut b, &mut j);
        let uri = format!(
            "data:application/octet-stream;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&b)
        );
        j["buffers"][0]["uri"] = serde_json::Value::String(uri);
        load_slice(j.to_string().as_bytes(), "made.gltf", None)
    }

    /// A morph-target weight channel becomes float curves of its node's skeleton, one per target
    /// (`body.weight_0`, `body.weight_1`), with the channel's keys.
    #[test]
    fn morph_target_weights_are_imported_as_curves() {
        let imp = skinned(|_, j| {
            // Two targets, two keys: (0, 0) then (0, 1), from the floats at byte 100.
            j["accessors"].as_array_mut().unwrap().push(
                serde_json::json!({"bufferView": 0, "byteOffset": 100, "componentType": 5126,
                    "count": 4, "type": "SCALAR"}),
            );
            j["animations"][0]["samplers"]
                .as_array_mut()
                .unwrap()
                .push(serde_json::json!({"input": 6, "output": 9}));
            j["animations"][0]["channels"]
                .as_array_mut()
                .unwrap()
                .push(serde_json::json!({"sampler": 2, "target": {"node": 6, "path": "weights"}}));
        })
        .unwrap();
        let c = &imp.skeletons[0].clips[0].clip;
        let names: Vec<&str> = c.curves.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["body.weight_0", "body.weight_1"]);
        assert_eq!(c.curves[1].track.times, [0.0, 1.0]);
        assert_eq!(c.curves[0].track.values, [0.0, 0.0]);
        assert_eq!(c.curves[1].track.values, [0.0, 1.0]);
        let lib = imp.build_library().unwrap().library;
        assert_eq!(lib.curve_names(), ["body.weight_0", "body.weight_1"]);
        assert!(
            imp.notes.iter().any(|n| n.contains("imported as float curves")),
            "{:?}",
            imp.notes
        );
    }

    /// Events in an animation's extras reach its clip and the built library; a malformed entry
    /// is an error naming the file, the animation and the entry; other extras are ignored.
    #[test]
    fn events_are_read_from_animation_extras() {
        let imp = skinned(|_, j| {
            j["animations"][0]["extras"] = serde_json::json!({"events": [
                {"name": "hit", "time": 0.25, "threshold": 0.5}, {"name": "end", "time": 1.0}]});
        })
        .unwrap();
        let c = &imp.skeletons[0].clips[0].clip;
        assert_eq!(
            c.events,
            [
                ClipEvent {
                    name: "hit".into(),
                    time: 0.25,
                    threshold: 0.5
                },
                ClipEvent::new("end", 1.0)
            ]
        );
        let lib = imp.build_library().unwrap().library;
        assert_eq!(lib.event_names(), ["hit", "end"]);
        assert_eq!(lib.clip_events(crate::ClipId(0)).len(), 2);
        let other = skinned(|_, j| j["animations"][0]["extras"] = serde_json::json!({"author": "x"})).unwrap();
        assert!(other.skeletons[0].clips[0].clip.events.is_empty());
        for bad in [
            serde_json::json!({"events": {"name": "x"}}),
            serde_json::json!({"events": [{"time": 0.5}]}),
            serde_json::json!({"events": [{"name": "late", "time": 3.0}]}),
            serde_json::json!({"events": [{"name": "x", "time": 0.5, "threshold": 2}]}),
        ] {
            let e = skinned(|_, j| j["animations"][0]["extras"] = bad.clone())
                .unwrap_err()
                .to_string();
            assert!(e.contains("made.gltf") && e.contains("animation 0 ('bend')"), "{e}");
        }
    }

    #[test]
    fn skins_map_joints_keep_four_largest_influences_and_read_cubic_splines() {
        let imp = skinned(|_, _| {}).unwrap();
        assert_eq!(imp.skeletons.len(), 1);
        let s = &imp.skeletons[0];
        assert_eq!(s.skeleton.joint_names(), ["root", "j1", "j2", "j3", "j4", "j5"]);
        assert_eq!(s.joint_nodes, [0, 1, 2, 3, 4, 5]);
        assert_eq!(s.skin_joints, [5, 4, 3, 2, 1]);
        assert_eq!(s.skeleton.inverse_binds()[0], Mat4::IDENTITY);
        let m = &imp.meshes[0].mesh;
        assert_eq!(m.joints[0][0], 5);
        assert_eq!(m.weights[0], [1.0, 0.0, 0.0, 0.0]);
        assert!((m.weights[1][0] - 128.0 / 255.0).abs() < 1e-6, "{:?}", m.weights[1]);
        assert_eq!(m.joints[2], [5, 4, 3, 2]);
        assert!((m.weights[2][0] - 100.0 / 230.0).abs() < 1e-6, "{:?}", m.weights[2]);
        assert_eq!(imp.meshes[0].max_influences, 5);
        assert!(
            imp.notes.iter().any(|n| n.contains("1 vertices had more than 4")),
            "{:?}",
            imp.notes
        );
        assert!(
            imp.notes.iter().any(|n| n.contains("outside every skeleton")),
            "{:?}",
            imp.notes
        );
        let c = &s.clips[0].clip;
        assert_eq!((c.name.as_str(), c.duration, c.looping), ("bend", 1.0, false));
        let r = c.tracks[0].rotation.as_ref().unwrap();
        assert_eq!(c.tracks[0].joint, "j2");
        assert_eq!(
            (r.interpolation, r.times.len(), r.values.len()),
            (Interpolation::CubicSpline, 2, 6)
        );
        imp.build_library().unwrap();
        // The mesh node's own transform (9, 9, 9) is ignored; identity inverse binds: the
        // vertices follow j1's translation.
        let local = crate::reference::sample(&s.skeleton, c, 0.0);
        let model = crate::reference::local_to_model(&s.skeleton, &local);
        let pal = crate::reference::palette(&s.skeleton, &model);
        let pose = imp.gltf_pose(0, &model, &pal).unwrap();
        assert_eq!(pose.joints.len(), 5);
        assert_eq!(pose.joints[0].node, 5);
        assert!(
            (pose.vertices[1] - DVec3::new(1.0, 1.0, 0.0)).length() < 1e-6,
            "{:?}",
            pose.vertices
        );
    }

    #[test]
    fn bad_data_is_an_error_naming_the_file() {
        type Tweak = Box<dyn FnOnce(&mut Vec<u8>, &mut serde_json::Value)>;
        let cases: Vec<(&str, Tweak)> = vec![
            ("exceed", Box::new(|_, j| j["accessors"][0]["count"] = 30.into())),
            (
                "component type",
                Box::new(|_, j| j["accessors"][0]["componentType"] = 5123.into()),
            ),
            (
                "non-finite",
                Box::new(|b, _| b[4..8].copy_from_slice(&f32::INFINITY.to_le_bytes())),
            ),
            ("skin joint 9", Box::new(|b, _| b[36] = 9)),
            ("indices[2]", Box::new(|b, _| b[88] = 7)),
            (
                "not part of the scene",
                Box::new(|_, j| {
                    j["nodes"]
                        .as_array_mut()
                        .unwrap()
                        .push(serde_json::json!({"name": "stray"}));
                    j["skins"][0]["joints"] = serde_json::json!([5, 4, 3, 2, 7]);
                }),
            ),
            (
                "listed twice",
                Box::new(|_, j| j["skins"][0]["joints"] = serde_json::json!([5, 4, 3, 2, 2])),
            ),
            (
                "need 6 rotation values",
                Box::new(|_, j| j["accessors"][7]["count"] = 5.into()),
            ),
            (
                "not after",
                Box::new(|b, _| b[96..100].copy_from_slice(&0.0f32.to_le_bytes())),
            ),
            ("byteLength", Box::new(|b, _| b.truncate(100))),
        ];
        for (expect, tweak) in cases {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| skinned(tweak)));
            let e = r.expect("no panic").expect_err(expect).to_string();
            assert!(e.starts_with("made.gltf: ") && e.contains(expect), "{expect}: {e}");
        }
    }
}
