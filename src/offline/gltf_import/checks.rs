//! Index and reference checks, before anything follows them: every index of the document against
//! the array it points into, and every `extensions` property an object of objects.

use crate::error::{Error, Result};
use gltf::json::{Index, Root};

/// glTF requires every `extensions` property to be an object of objects; the JSON model does not
/// check the extensions it does not know, so do it here on the raw JSON.
pub(super) fn check_extension_objects(bytes: &[u8], file: &str) -> Result<()> {
    let json: std::borrow::Cow<'_, [u8]> = if bytes.starts_with(b"glTF") {
        match gltf::binary::Glb::from_slice(bytes) {
            Ok(glb) => std::borrow::Cow::Owned(glb.json.into_owned()),
            Err(_) => return Ok(()), // already parsed once; cannot happen
        }
    } else {
        std::borrow::Cow::Borrowed(bytes)
    };
    let Ok(root) = serde_json::from_slice::<serde_json::Value>(&json) else {
        return Ok(());
    };
    let mut stack: Vec<(String, &serde_json::Value)> = vec![(String::new(), &root)];
    while let Some((path, v)) = stack.pop() {
        match v {
            serde_json::Value::Object(map) => {
                for (k, child) in map {
                    let child_path = format!("{path}/{k}");
                    if k == "extensions" {
                        let Some(exts) = child.as_object() else {
                            return Err(Error::Asset {
                                file: file.into(),
                                what: format!("not valid glTF: {child_path} must be an object"),
                            });
                        };
                        if let Some((name, _)) = exts.iter().find(|(_, e)| !e.is_object()) {
                            return Err(Error::Asset {
                                file: file.into(),
                                what: format!("not valid glTF: extension {child_path}/{name} must be an object"),
                            });
                        }
                    }
                    stack.push((child_path, child));
                }
            }
            serde_json::Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    stack.push((format!("{path}/{i}"), child));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The indices checked so far: the first past the end of its array is the problem.
struct Check<'a> {
    file: &'a str,
    problem: Option<Error>,
}

impl Check<'_> {
    fn index<T>(&mut self, path: impl FnOnce() -> String, index: Index<T>, len: usize, what: &str) {
        if self.problem.is_none() && index.value() >= len {
            self.problem = Some(Error::Asset {
                file: self.file.into(),
                what: format!("{} is {}, past the end of {what} ({len})", path(), index.value()),
            });
        }
    }
}

/// Every index in the document, checked against the array it points into before anything follows
/// it: the `gltf` crate's accessors unwrap their targets (an animation channel's target node, for
/// one, is not checked by its validation), so an index past the end would panic there. Also the
/// channel target's path, which its validation skips too (found by fuzzing).
pub(super) fn check_indices(root: &Root, file: &str) -> Result<()> {
    let mut c = Check { file, problem: None };
    scenes_and_nodes(&mut c, root);
    skins(&mut c, root);
    meshes(&mut c, root);
    accessors_and_views(&mut c, root);
    animations(&mut c, root);
    images_textures_materials(&mut c, root);
    c.problem.map_or(Ok(()), Err)
}

/// The default scene, the scenes' nodes and each node's children, mesh, skin and camera.
fn scenes_and_nodes(c: &mut Check<'_>, root: &Root) {
    let nodes = root.nodes.len();
    if let Some(scene) = root.scene {
        c.index(|| "scene".into(), scene, root.scenes.len(), "the scenes");
    }
    for (i, scene) in root.scenes.iter().enumerate() {
        for (k, &n) in scene.nodes.iter().enumerate() {
            c.index(|| format!("scenes[{i}].nodes[{k}]"), n, nodes, "the nodes");
        }
    }
    for (i, node) in root.nodes.iter().enumerate() {
        for (k, &n) in node.children.iter().flatten().enumerate() {
            c.index(|| format!("nodes[{i}].children[{k}]"), n, nodes, "the nodes");
        }
        if let Some(m) = node.mesh {
            c.index(|| format!("nodes[{i}].mesh"), m, root.meshes.len(), "the meshes");
        }
        if let Some(s) = node.skin {
            c.index(|| format!("nodes[{i}].skin"), s, root.skins.len(), "the skins");
        }
        if let Some(cam) = node.camera {
            c.index(|| format!("nodes[{i}].camera"), cam, root.cameras.len(), "the cameras");
        }
    }
}

/// Each skin's joints, skeleton and inverse bind matrices.
fn skins(c: &mut Check<'_>, root: &Root) {
    let accessors = root.accessors.len();
    let nodes = root.nodes.len();
    for (i, skin) in root.skins.iter().enumerate() {
        for (k, &n) in skin.joints.iter().enumerate() {
            c.index(|| format!("skins[{i}].joints[{k}]"), n, nodes, "the nodes");
        }
        if let Some(n) = skin.skeleton {
            c.index(|| format!("skins[{i}].skeleton"), n, nodes, "the nodes");
        }
        if let Some(a) = skin.inverse_bind_matrices {
            c.index(
                || format!("skins[{i}].inverseBindMatrices"),
                a,
                accessors,
                "the accessors",
            );
        }
    }
}

/// Each primitive's attributes, indices, material and morph targets.
fn meshes(c: &mut Check<'_>, root: &Root) {
    let accessors = root.accessors.len();
    for (i, mesh) in root.meshes.iter().enumerate() {
        for (j, p) in mesh.primitives.iter().enumerate() {
            for (semantic, &a) in &p.attributes {
                let name = match semantic {
                    gltf::json::validation::Checked::Valid(s) => s.to_string(),
                    gltf::json::validation::Checked::Invalid => "?".into(),
                };
                c.index(
                    || format!("meshes[{i}].primitives[{j}].attributes.{name}"),
                    a,
                    accessors,
                    "the accessors",
                );
            }
            if let Some(a) = p.indices {
                c.index(
                    || format!("meshes[{i}].primitives[{j}].indices"),
                    a,
                    accessors,
                    "the accessors",
                );
            }
            if let Some(m) = p.material {
                c.index(
                    || format!("meshes[{i}].primitives[{j}].material"),
                    m,
                    root.materials.len(),
                    "the materials",
                );
            }
            for (t, target) in p.targets.iter().flatten().enumerate() {
                for (name, a) in [
                    ("POSITION", target.positions),
                    ("NORMAL", target.normals),
                    ("TANGENT", target.tangents),
                ] {
                    if let Some(a) = a {
                        let path = || format!("meshes[{i}].primitives[{j}].targets[{t}].{name}");
                        c.index(path, a, accessors, "the accessors");
                    }
                }
            }
        }
    }
}

/// Each accessor's buffer views (its own and its sparse ones) and each buffer view's buffer.
fn accessors_and_views(c: &mut Check<'_>, root: &Root) {
    let views = root.buffer_views.len();
    for (i, acc) in root.accessors.iter().enumerate() {
        if let Some(v) = acc.buffer_view {
            c.index(|| format!("accessors[{i}].bufferView"), v, views, "the buffer views");
        }
        if let Some(sparse) = &acc.sparse {
            let (indices, values) = (sparse.indices.buffer_view, sparse.values.buffer_view);
            c.index(
                || format!("accessors[{i}].sparse.indices.bufferView"),
                indices,
                views,
                "the buffer views",
            );
            c.index(
                || format!("accessors[{i}].sparse.values.bufferView"),
                values,
                views,
                "the buffer views",
            );
        }
    }
    for (i, view) in root.buffer_views.iter().enumerate() {
        c.index(
            || format!("bufferViews[{i}].buffer"),
            view.buffer,
            root.buffers.len(),
            "the buffers",
        );
    }
}

/// Each channel's sampler, target node and target path, and each sampler's accessors.
fn animations(c: &mut Check<'_>, root: &Root) {
    let accessors = root.accessors.len();
    let nodes = root.nodes.len();
    for (i, anim) in root.animations.iter().enumerate() {
        for (k, ch) in anim.channels.iter().enumerate() {
            let samplers = anim.samplers.len();
            c.index(
                || format!("animations[{i}].channels[{k}].sampler"),
                ch.sampler,
                samplers,
                "the animation's samplers",
            );
            c.index(
                || format!("animations[{i}].channels[{k}].target.node"),
                ch.target.node,
                nodes,
                "the nodes",
            );
            // Not an index, but skipped by the crate's validation in the same way, and unwrapped
            // by its accessor (`Target::property`).
            if c.problem.is_none() && matches!(ch.target.path, gltf::json::validation::Checked::Invalid) {
                c.problem = Some(Error::Asset {
                    file: c.file.into(),
                    what: format!("animations[{i}].channels[{k}].target.path is not a property glTF knows"),
                });
            }
        }
        for (k, sampler) in anim.samplers.iter().enumerate() {
            c.index(
                || format!("animations[{i}].samplers[{k}].input"),
                sampler.input,
                accessors,
                "the accessors",
            );
            c.index(
                || format!("animations[{i}].samplers[{k}].output"),
                sampler.output,
                accessors,
                "the accessors",
            );
        }
    }
}

/// Each image's buffer view, each texture's image and sampler, each material's textures.
fn images_textures_materials(c: &mut Check<'_>, root: &Root) {
    let views = root.buffer_views.len();
    for (i, image) in root.images.iter().enumerate() {
        if let Some(v) = image.buffer_view {
            c.index(|| format!("images[{i}].bufferView"), v, views, "the buffer views");
        }
    }
    for (i, texture) in root.textures.iter().enumerate() {
        c.index(
            || format!("textures[{i}].source"),
            texture.source,
            root.images.len(),
            "the images",
        );
        if let Some(s) = texture.sampler {
            c.index(
                || format!("textures[{i}].sampler"),
                s,
                root.samplers.len(),
                "the texture samplers",
            );
        }
    }
    for (i, m) in root.materials.iter().enumerate() {
        let pbr = &m.pbr_metallic_roughness;
        let textures = [
            (
                "pbrMetallicRoughness.baseColorTexture",
                pbr.base_color_texture.as_ref().map(|t| t.index),
            ),
            (
                "pbrMetallicRoughness.metallicRoughnessTexture",
                pbr.metallic_roughness_texture.as_ref().map(|t| t.index),
            ),
            ("normalTexture", m.normal_texture.as_ref().map(|t| t.index)),
            ("occlusionTexture", m.occlusion_texture.as_ref().map(|t| t.index)),
            ("emissiveTexture", m.emissive_texture.as_ref().map(|t| t.index)),
        ];
        for (name, t) in textures {
            if let Some(t) = t {
                c.index(
                    || format!("materials[{i}].{name}.index"),
                    t,
                    root.textures.len(),
                    "the textures",
                );
            }
        }
    }
}
