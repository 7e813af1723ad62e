//! `wgpu-anim sample`: a clip evaluated at a time, on the GPU, the CPU mirror or the f64
//! reference.

use crate::{SampleArgs, clip_source, find_animation, load};
use glam::{DMat4, DVec3};
use serde_json::{Value, json};
use wgpu_anim::offline::gltf_import::{ClipSource, GltfPose, Imported};
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
                vertices: None,
            }
        }
        EvalPath::Cpu => cpu_pose(&imp, s, c, t, &clip_source(a.compressed.as_deref())?)?,
        EvalPath::Gpu => gpu_pose(&imp, s, c, t, &clip_source(a.compressed.as_deref())?)?,
    };
    let mut pose = imp.gltf_pose(s, &ev.model, &ev.palette).map_err(|e| e.to_string())?;
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

/// A pose evaluated by the crate: model matrices and palette in skeleton joint order, and the
/// skinned vertices of mesh 0, primitive 0 when it belongs to the skeleton.
struct Evaluated {
    model: Vec<DMat4>,
    palette: Vec<DMat4>,
    vertices: Option<Vec<DVec3>>,
}

fn mesh0(imp: &Imported, s: usize) -> Option<Vec<wgpu_anim::SkinVertex>> {
    imp.mesh(0, 0)
        .filter(|m| m.skeleton == s && imp.skeletons[s].skin.is_some())
        .map(|m| m.mesh.gpu_vertices())
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
    let pose = wgpu_anim::cpu::pose_at(&lib.library, lib.clips[s][c], t as f32).map_err(|e| e.to_string())?;
    let vertices = match mesh0(imp, s) {
        Some(v) => Some(to_points(
            &wgpu_anim::cpu::skin(&pose.palette, 0, &v).map_err(|e| e.to_string())?,
        )),
        None => None,
    };
    Ok(Evaluated {
        model: to_dmat(&pose.model),
        palette: to_dmat(&pose.palette),
        vertices,
    })
}

/// The GPU: one animator instance, every stage read back, vertices through the `skin` shader.
fn gpu_pose(imp: &Imported, s: usize, c: usize, t: f64, source: &ClipSource) -> Result<Evaluated, String> {
    let lib = imp.build_library_with(source).map_err(|e| e.to_string())?;
    let (device, queue) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
    let mut animator = Animator::new(
        &device,
        &lib.library,
        &AnimatorDesc {
            max_instances: 1,
            max_joints: None,
            page_instances: None,
            dual_quaternion: false,
            ..AnimatorDesc::default()
        },
    )
    .map_err(|e| e.to_string())?;
    animator
        .add_instance(&InstanceDesc {
            time: t as f32,
            rate: 0.0,
            loop_mode: LoopMode::Once,
            ..InstanceDesc::new(lib.clips[s][c])
        })
        .map_err(|e| e.to_string())?;
    animator.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder);
    queue.submit([encoder.finish()]);
    let (_, pose) = animator.read_back(&device, &queue).map_err(|e| e.to_string())?;
    let inst = animator.instances()[0];
    let range = inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize;
    let (model, palette) = match (pose.model.get(range.clone()), pose.palette.get(range)) {
        (Some(m), Some(p)) => (to_dmat(m), to_dmat(p)),
        _ => return Err("GPU read-back is shorter than the instance's joints".into()),
    };
    let vertices = match mesh0(imp, s) {
        Some(v) => Some(to_points(
            &wgpu_anim::gpu::skin_on_gpu(&device, &queue, &animator, inst.joint_offset, &v)
                .map_err(|e| e.to_string())?,
        )),
        None => None,
    };
    Ok(Evaluated {
        model,
        palette,
        vertices,
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
    if !pose.vertices.is_empty() {
        let (lo, hi) = pose
            .vertices
            .iter()
            .fold((DVec3::splat(f64::MAX), DVec3::splat(f64::MIN)), |(lo, hi), v| {
                (lo.min(*v), hi.max(*v))
            });
        outln!(
            "  mesh 0/0: {} skinned vertices, bounds ({:.4}, {:.4}, {:.4}) .. ({:.4}, {:.4}, {:.4})",
            pose.vertices.len(),
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
