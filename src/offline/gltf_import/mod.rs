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
use glam::{DMat4, DVec3};
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
    /// normalized. Its [`SkinnedMesh::morph_targets`] are the primitive's (POSITION, NORMAL and
    /// TANGENT displacements, sparse accessors included; only the vertices a target moves are
    /// kept), named by `extras.targetNames`, with the mesh's default `weights`.
    pub mesh: SkinnedMesh,
    /// The largest number of non-zero influences of any vertex in the file (before any were cut).
    pub max_influences: usize,
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
    /// The file's clips, raw, without the keys their interpolation reproduces within these
    /// settings ([`crate::offline::key_reduction`]).
    Reduce(crate::offline::key_reduction::KeyReduction),
}

impl Imported {
    /// Validates and packs every skeleton and clip into an [`AnimationLibrary`], and checks that
    /// no mesh's skinned vertex can reach past [`MAX_REACH`](crate::reach::MAX_REACH) in any pose
    /// of its skeleton's clips ([`AnimationLibrary::check_mesh`]).
    ///
    /// Errors: [`Error::Asset`] naming the file and the clip, joint or mesh the builder or the
    /// check refuses.
    pub fn build_library(&self) -> Result<ImportedLibrary> {
        self.build_library_with(&ClipSource::Raw)
    }

    /// As [`Imported::build_library`], the clips raw, compressed, read from a compressed
    /// library file, or with their keys reduced.
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
                    None => match source {
                        ClipSource::Reduce(settings) => crate::offline::key_reduction::reduce_keys(&c.clip, settings)
                            .and_then(|reduced| b.add_clip(id, &reduced)),
                        _ => b.add_clip(id, &c.clip),
                    },
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
        let library = b.build();
        for m in &self.meshes {
            let Some(&skeleton) = skeletons.get(m.skeleton) else {
                continue;
            };
            library.check_mesh(skeleton, &m.mesh).map_err(|e| {
                asset(
                    &self.file,
                    format!("mesh {} primitive {}: {e}", m.mesh_index, m.primitive),
                )
            })?;
        }
        Ok(ImportedLibrary {
            library,
            skeletons,
            clips,
        })
    }

    /// Samples every clip of `library` (built from this import) at `times_per_clip` times spread
    /// over its duration on the CPU mirror, skins every mesh of its skeleton with each pose, and
    /// checks that every model, skinning and socket matrix and every skinned vertex is finite
    /// and within [`MAX_REACH`](crate::reach::MAX_REACH) ([`crate::reach::first_beyond`]): what
    /// the fuzz targets and the mutation test assert of every file the library accepts.
    ///
    /// Errors: [`Error::Asset`] naming the file, the clip, the time and the matrix or vertex.
    pub fn check_poses(&self, library: &ImportedLibrary, times_per_clip: usize) -> Result<()> {
        let lib = &library.library;
        let meshes: Vec<(&ImportedMesh, Vec<crate::SkinVertex>)> =
            self.meshes.iter().map(|m| (m, m.mesh.gpu_vertices())).collect();
        for (s, clips) in library.clips.iter().enumerate() {
            for &clip in clips {
                let name = lib.clip_names().get(clip.index() as usize).cloned().unwrap_or_default();
                let duration = lib.clips().get(clip.index() as usize).map_or(0.0, |c| c.duration);
                for k in 0..times_per_clip.max(1) {
                    let t = duration * k as f32 / (times_per_clip.max(2) - 1) as f32;
                    let fail = |what: String| asset(&self.file, format!("clip '{name}' at {t} s: {what}"));
                    let pose = crate::cpu::pose_at(lib, clip, t).map_err(|e| fail(e.to_string()))?;
                    if let Some(what) = pose.beyond_reach() {
                        return Err(fail(what));
                    }
                    for (m, vertices) in meshes.iter().filter(|(m, _)| m.skeleton == s) {
                        let skinned = crate::cpu::skin(&pose.palette, 0, vertices).map_err(|e| fail(e.to_string()))?;
                        let positions = skinned.iter().flat_map(|p| p.position.truncate().to_array());
                        if let Some((k, v)) = crate::reach::first_beyond(positions) {
                            return Err(fail(format!(
                                "mesh {} primitive {}: skinned vertex {} has coordinate {v}",
                                m.mesh_index,
                                m.primitive,
                                k / 3
                            )));
                        }
                    }
                }
            }
        }
        Ok(())
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
    /// The positions of every vertex of mesh 0, primitive 0 ([`Imported::pose_mesh`]; empty
    /// when there is none): morphed by [`GltfPose::morph_weights`], then skinned, or for a file
    /// without skins placed by its node's world matrix.
    pub vertices: Vec<DVec3>,
    /// The morph weights those vertices were morphed by, one per target of the mesh (empty when
    /// it has none).
    pub morph_weights: Vec<f64>,
}

impl Imported {
    /// The skeleton the fixtures describe: the first skin's, or the scene's when unskinned.
    #[must_use]
    pub fn primary_skeleton(&self) -> Option<usize> {
        self.skeleton_of_skin(0)
            .or_else(|| (!self.skeletons.is_empty()).then_some(0))
    }

    /// The mesh whose vertices a [`GltfPose`] of `skeleton` lists: mesh 0, primitive 0 on the
    /// first node that uses it, when it is bound to `skeleton` and either the skeleton is a
    /// skin's or the mesh has morph targets (the vertices of a rigid mesh without them are its
    /// node's transform of its positions, and the fixtures leave them out).
    #[must_use]
    pub fn pose_mesh(&self, skeleton: usize) -> Option<&ImportedMesh> {
        let skinned = self.skeletons.get(skeleton)?.skin.is_some();
        self.mesh(0, 0)
            .filter(|m| m.skeleton == skeleton && (skinned || !m.mesh.morph_targets.targets.is_empty()))
    }

    /// The morph weights of [`Imported::pose_mesh`]'s targets when its skeleton plays clip `clip`
    /// alone at `time` seconds, in f64 ([`crate::reference::morph_weights`]): glTF's rule, the
    /// clip's `weights` channel (clamped to its own keys), else the node's `weights`, else the
    /// mesh's, else 0. Empty when there is no such mesh, clip or target.
    #[must_use]
    pub fn morph_weights_at(&self, skeleton: usize, clip: usize, time: f64) -> Vec<f64> {
        let clip = self.skeletons.get(skeleton).and_then(|s| s.clips.get(clip));
        let (Some(m), Some(c)) = (self.pose_mesh(skeleton), clip) else {
            return Vec::new();
        };
        let targets = &m.mesh.morph_targets;
        crate::reference::morph_weights(&c.clip, &targets.default_weights, targets.targets.len(), time)
    }

    /// Maps a pose of skeleton `skeleton` (its model matrices and palette, in skeleton joint
    /// order) to glTF terms: joints in skin order (or node order), skin matrices, and the
    /// vertices of [`Imported::pose_mesh`] morphed by `morph_weights` (one per target; missing
    /// ones 0, e.g. from [`Imported::morph_weights_at`]) then skinned, in f64.
    pub fn gltf_pose(
        &self,
        skeleton: usize,
        model: &[DMat4],
        palette: &[DMat4],
        morph_weights: &[f64],
    ) -> Result<GltfPose> {
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
        let (vertices, morph_weights) = match self.pose_mesh(skeleton) {
            Some(m) => {
                let targets = &m.mesh.morph_targets;
                let mut weights = morph_weights.to_vec();
                weights.resize(targets.targets.len(), 0.0);
                let vertices = crate::reference::skin_morphed(&m.mesh, targets, &weights, palette);
                (vertices, weights)
            }
            None => (Vec::new(), Vec::new()),
        };
        Ok(GltfPose {
            skinned,
            joints,
            skin_matrices,
            vertices,
            morph_weights,
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

/// An [`Error::Asset`] of `file`.
fn asset(file: &str, e: impl std::fmt::Display) -> Error {
    Error::Asset {
        file: file.into(),
        what: e.to_string(),
    }
}

/// One import under way: the document, its buffers and the notes so far. Its methods are spread
/// over this module's files, one `impl` block per glTF section.
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

    /// The whole import: the scene graph, then skeletons, clips and meshes.
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
mod tests;
