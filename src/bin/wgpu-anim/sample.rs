//! `wgpu-anim sample`: a clip evaluated at a time, on the GPU, the CPU mirror or the f64
//! reference.

use crate::{SampleArgs, clip_source, find_animation, load};
use glam::{DMat4, DVec3};
use serde_json::{Value, json};
use wgpu_anim::gpu::GpuMorphTargets;
use wgpu_anim::offline::gltf_import::{ClipSource, GltfPose, Imported};
use wgpu_anim::shaders::Resource;
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, LoopMode, reference};

#[derive(Clone, Copy, PartialEq, Eq)]
enum EvalPath {
    Gpu,
    Cpu,
    Reference,
}

impl EvalPath {
    fn name(self) -> &'static str {
        match self {
            EvalPath::Gpu => "gpu",
            EvalPath::Cpu => "cpu",
            EvalPath::Reference => "reference",
        }
    }
}

pub(crate) fn sample(a: &SampleArgs) -> Result<(), String> {
    let path = if a.cpu {
        EvalPath::Cpu
    } else if a.reference {
        EvalPath::Reference
    } else {
        EvalPath::Gpu
    };
    let imp = load(&a.file)?;
    let file = a.file.display().to_string();
    let animation = find_animation(&imp, &file, &a.clip)?;
    let info = &imp.animations[animation];
    let s = imp
        .primary_skeleton()
        .ok_or_else(|| format!("{file}: nothing to animate (no nodes)"))?;
    let sk = &imp.skeletons[s];
    let c = sk
        .clip_of_animation(animation)
        .ok_or_else(|| format!("{file}: animation {animation} does not animate the first skeleton"))?;
    // Accepted means its library builds: every clip, skeleton and mesh within reach.
    imp.build_library().map_err(|e| e.to_string())?;
    let t = a.time.clamp(f64::from(info.first_key), f64::from(info.duration));
    let ev = match path {
        EvalPath::Reference => {
            let local = reference::sample(&sk.skeleton, &sk.clips[c].clip, t);
            let model = reference::local_to_model(&sk.skeleton, &local);
            let palette = reference::palette(&sk.skeleton, &model);
            Evaluated {
                model,
                palette,
                // The f64 vertices and weights of `gltf_pose`.
                vertices: None,
                morph_weights: imp.morph_weights_at(s, c, t),
            }
        }
        EvalPath::Cpu => cpu_pose(&imp, s, c, t, &clip_source(a.compressed.as_deref())?)?,
        EvalPath::Gpu => gpu_pose(&imp, s, c, t, &clip_source(a.compressed.as_deref())?)?,
    };
    let mut pose = imp
        .gltf_pose(s, &ev.model, &ev.palette, &ev.morph_weights)
        .map_err(|e| e.to_string())?;
    if let Some(v) = ev.vertices {
        pose.vertices = v;
    }
    check_finite(&file, &pose)?;
    if a.json {
        print_json(&file, animation, &info.name, a.time, t, path, &pose)
    } else {
        print_summary(&file, animation, &info.name, t, path, &pose)
    }
}

/// A pose evaluated by the crate: model matrices and palette in skeleton joint order, the
/// vertices of mesh 0, primitive 0 when it has some to list ([`Imported::pose_mesh`]: morphed,
/// then skinned or placed by its node), and the morph weights they were morphed by.
struct Evaluated {
    model: Vec<DMat4>,
    palette: Vec<DMat4>,
    vertices: Option<Vec<DVec3>>,
    morph_weights: Vec<f64>,
}

/// The mesh a pose lists the vertices of: its bind-pose vertices, its morph targets packed (none
/// when it has none) and the weights it starts with, one per target.
struct PoseMesh {
    vertices: Vec<wgpu_anim::SkinVertex>,
    targets: Option<wgpu_anim::MorphSet>,
    own_weights: Vec<f32>,
}

fn pose_mesh(imp: &Imported, s: usize) -> Result<Option<PoseMesh>, String> {
    let Some(m) = imp.pose_mesh(s) else { return Ok(None) };
    let targets = &m.mesh.morph_targets;
    let set = if targets.targets.is_empty() {
        None
    } else {
        Some(targets.build(m.mesh.positions.len()).map_err(|e| e.to_string())?)
    };
    let own_weights = set
        .as_ref()
        .map(wgpu_anim::MorphSet::default_weights)
        .unwrap_or_default();
    Ok(Some(PoseMesh {
        vertices: m.mesh.gpu_vertices(),
        targets: set,
        own_weights,
    }))
}

fn to_f64(w: &[f32]) -> Vec<f64> {
    w.iter().map(|&w| f64::from(w)).collect()
}

fn to_dmat(a: &[wgpu_anim::Affine]) -> Vec<DMat4> {
    a.iter().map(|a| a.to_mat4().as_dmat4()).collect()
}

fn to_points(p: &[wgpu_anim::cpu::SkinnedPoint]) -> Vec<DVec3> {
    p.iter().map(|p| p.position.truncate().as_dvec3()).collect()
}

/// The CPU mirror of the GPU stages (f32), skinning included.
fn cpu_pose(imp: &Imported, s: usize, c: usize, t: f64, source: &ClipSource) -> Result<Evaluated, String> {
    let lib = imp.build_library_with(source).map_err(|e| e.to_string())?;
    let clip = lib.clips[s][c];
    let pose = wgpu_anim::cpu::pose_at(&lib.library, clip, t as f32).map_err(|e| e.to_string())?;
    let (mut vertices, mut morph_weights) = (None, Vec::new());
    if let Some(m) = pose_mesh(imp, s)? {
        let skinned = match &m.targets {
            Some(set) => {
                let w = wgpu_anim::cpu::morph_weights_at(&lib.library, clip, t as f32, &m.own_weights)
                    .map_err(|e| e.to_string())?;
                morph_weights = to_f64(&w);
                wgpu_anim::cpu::skin_morphed(&pose.palette, &[], 0, 0.0, set.words(), &w, &m.vertices)
            }
            None => wgpu_anim::cpu::skin(&pose.palette, 0, &m.vertices),
        };
        vertices = Some(to_points(&skinned.map_err(|e| e.to_string())?));
    }
    Ok(Evaluated {
        model: to_dmat(&pose.model),
        palette: to_dmat(&pose.palette),
        vertices,
        morph_weights,
    })
}

/// The GPU: one animator instance, every stage read back, vertices through the `skin` shader.
fn gpu_pose(imp: &Imported, s: usize, c: usize, t: f64, source: &ClipSource) -> Result<Evaluated, String> {
    let lib = imp.build_library_with(source).map_err(|e| e.to_string())?;
    let mesh = pose_mesh(imp, s)?;
    let targets = mesh.as_ref().and_then(|m| m.targets.as_ref());
    let room = targets.map_or(0, |t| t.target_count() as u32);
    let (device, queue) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
    let mut animator = Animator::new(
        &device,
        &lib.library,
        &AnimatorDesc::default()
            .with_max_instances(1)
            // Room for the mesh's weights and any the skeleton's clips drive.
            .with_morph_weights(room.max(lib.library.morph_targets(s as u32))),
    )
    .map_err(|e| e.to_string())?;
    animator
        .controller_mut()
        .add_instance(
            &InstanceDesc::new(lib.clips[s][c])
                .with_time(t as f32)
                .with_rate(0.0)
                .with_loop_mode(LoopMode::Once),
        )
        .map_err(|e| e.to_string())?;
    if let Some(m) = mesh.as_ref().filter(|m| m.targets.is_some()) {
        animator
            .controller_mut()
            .set_morph_weights(0, &m.own_weights)
            .map_err(|e| e.to_string())?;
    }
    animator.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder).map_err(|e| e.to_string())?;
    queue.submit([encoder.finish()]);
    let (_, pose) = animator.read_back(&device, &queue).map_err(|e| e.to_string())?;
    let inst = animator.controller().instances()[0];
    let range = inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize;
    let (model, palette) = match (pose.model.get(range.clone()), pose.palette.get(range)) {
        (Some(m), Some(p)) => (to_dmat(m), to_dmat(p)),
        _ => return Err("GPU read-back is shorter than the instance's joints".into()),
    };
    let (mut vertices, mut morph_weights) = (None, Vec::new());
    if let Some(m) = &mesh {
        let skinned = match &m.targets {
            Some(set) => {
                // The weights in use, as the sample pass blended them, come first in the buffer.
                let w: Vec<f32> = animator
                    .read_page_buffer(&device, &queue, 0, Resource::MorphWeights, 0, u64::from(room))
                    .map_err(|e| e.to_string())?;
                morph_weights = to_f64(&w);
                let gpu_targets = GpuMorphTargets::new(&device, set).map_err(|e| e.to_string())?;
                wgpu_anim::testing::skin_on_gpu_morphed(&device, &queue, &animator, 0, &gpu_targets, &m.vertices)
            }
            None => wgpu_anim::testing::skin_on_gpu(&device, &queue, &animator, inst.joint_offset, &m.vertices),
        };
        vertices = Some(to_points(&skinned.map_err(|e| e.to_string())?));
    }
    Ok(Evaluated {
        model,
        palette,
        vertices,
        morph_weights,
    })
}

/// An error naming the first joint world matrix, skinning matrix or vertex that is not finite
/// (the library refuses what would make one; should one ever appear, it is named, never printed
/// as JSON's `null`).
fn check_finite(file: &str, pose: &GltfPose) -> Result<(), String> {
    let finite = |m: &DMat4| m.is_finite();
    if let Some(j) = pose.joints.iter().find(|j| !finite(&j.world)) {
        return Err(format!(
            "{file}: joint '{}' (node {}): world matrix is not finite",
            j.name, j.node
        ));
    }
    if let Some(k) = pose.skin_matrices.iter().position(|m| !finite(m)) {
        return Err(format!("{file}: skinning matrix {k} is not finite"));
    }
    if let Some(k) = pose.vertices.iter().position(|v| !v.is_finite()) {
        return Err(format!("{file}: skinned vertex {k} is not finite"));
    }
    Ok(())
}

/// What the JSON's `vertices` are.
const VERTICES_RULE: &str = "mesh 0, primitive 0 on the first node that uses it: morphed by morph_weights, then skinned \
     (a file without skins: by the node's world matrix; listed only when the mesh has morph targets)";

fn mat_json(m: &DMat4) -> Value {
    json!(m.to_cols_array().to_vec())
}

fn print_json(
    file: &str,
    clip: usize,
    clip_name: &str,
    time: f64,
    sampled: f64,
    path: EvalPath,
    pose: &GltfPose,
) -> Result<(), String> {
    let joints: Vec<Value> = pose
        .joints
        .iter()
        .map(|j| {
            let mut o = serde_json::Map::new();
            if let Some(i) = j.index {
                o.insert("index".into(), json!(i));
            }
            o.insert("node".into(), json!(j.node));
            o.insert("name".into(), json!(j.name));
            o.insert("world".into(), mat_json(&j.world));
            Value::Object(o)
        })
        .collect();
    let v = json!({
        "asset": file,
        "clip": clip,
        "clip_name": clip_name,
        "time": time,
        "sampled_time": sampled,
        "time_rule": "clamped to [first key, last key]; no looping",
        "weights": "normalized (WEIGHTS_0 divided by their sum)",
        "evaluated_on": path.name(),
        "skinned": pose.skinned,
        "joints": joints,
        "skin_matrices": pose.skin_matrices.iter().map(mat_json).collect::<Vec<_>>(),
        "vertices": pose.vertices.iter().map(|v| json!([v.x, v.y, v.z])).collect::<Vec<_>>(),
        "vertices_rule": VERTICES_RULE,
        "morph_weights": pose.morph_weights,
    });
    outln!("{v}");
    Ok(())
}

fn print_summary(
    file: &str,
    clip: usize,
    clip_name: &str,
    sampled: f64,
    path: EvalPath,
    pose: &GltfPose,
) -> Result<(), String> {
    outln!(
        "{file}: clip {clip} '{clip_name}' at {sampled:.4} s ({}), {} joints{}",
        path.name(),
        pose.joints.len(),
        if pose.skinned {
            " in skin order"
        } else {
            " in node order"
        }
    );
    for j in pose.joints.iter().take(8) {
        let p = j.world.w_axis.truncate();
        outln!(
            "  {:<24} node {:>3}  at ({:.4}, {:.4}, {:.4})",
            j.name,
            j.node,
            p.x,
            p.y,
            p.z
        );
    }
    if pose.joints.len() > 8 {
        outln!("  … {} more (use --json for all)", pose.joints.len() - 8);
    }
    if !pose.morph_weights.is_empty() {
        let w: Vec<String> = pose.morph_weights.iter().map(|w| format!("{w:.4}")).collect();
        outln!("  mesh 0/0: morph weights [{}]", w.join(", "));
    }
    if !pose.vertices.is_empty() {
        let (lo, hi) = pose
            .vertices
            .iter()
            .fold((DVec3::splat(f64::MAX), DVec3::splat(f64::MIN)), |(lo, hi), v| {
                (lo.min(*v), hi.max(*v))
            });
        outln!(
            "  mesh 0/0: {} {} vertices, bounds ({:.4}, {:.4}, {:.4}) .. ({:.4}, {:.4}, {:.4})",
            pose.vertices.len(),
            if pose.skinned { "skinned" } else { "placed" },
            lo.x,
            lo.y,
            lo.z,
            hi.x,
            hi.y,
            hi.z
        );
    }
    Ok(())
}
