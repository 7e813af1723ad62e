//! Skeletons: joint names, parents (every parent before its children), rest pose, inverse binds.

use crate::error::{Error, Result};
use crate::ik::{IkChain, IkKind, MAX_AIM_JOINTS, MAX_IK_CHAINS};
use crate::math::Transform;
use crate::reach::{self, Extent};
use glam::Mat4;

/// The most joints one skeleton may have. The GPU stages loop over joints with no fixed-size
/// arrays, so this is a sanity bound on input, not a shader limit.
pub const MAX_JOINTS: usize = 4096;

/// One joint as the user describes it, in any order.
#[derive(Clone, Debug)]
pub struct JointDesc {
    /// Unique name; clips refer to joints by name.
    pub name: String,
    /// Index of the parent in the list given to [`Skeleton::new`], or `None` for a root.
    pub parent: Option<usize>,
    /// Rest (bind) pose, local to the parent.
    pub rest: Transform,
    /// `joint_from_model` at bind time: the inverse of the joint's model-space bind matrix.
    pub inverse_bind: Mat4,
}

/// The most sockets a skeleton may have (each character's socket matrices take this many slots).
pub const MAX_SOCKETS: usize = crate::layout::MAX_SOCKETS as usize;

/// A named attachment point that follows a joint: where a prop is held (a sword in a hand, a hat
/// on a head), as a joint and an offset from it. Each frame the GPU writes every character's
/// socket matrices (`world · model[joint] · offset`) beside its palette
/// ([`crate::Animator::socket_slot`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Socket {
    /// Unique among the skeleton's sockets.
    pub name: String,
    /// The joint it follows (an index in parents-first order).
    pub joint: usize,
    /// `joint_from_socket`: the socket's transform relative to the joint.
    pub offset: Transform,
}

/// A validated skeleton whose joints are ordered parents-first, so model-space propagation is one
/// forward loop: `model[i] = model[parent[i]] * local[i]`.
#[derive(Clone, Debug)]
pub struct Skeleton {
    name: String,
    names: Vec<String>,
    parents: Vec<Option<u32>>,
    rest: Vec<Transform>,
    inverse_binds: Vec<Mat4>,
    source_index: Vec<usize>,
    sockets: Vec<Socket>,
    ik_chains: Vec<IkChain>,
}

impl Skeleton {
    /// Validates `joints` and orders them parents-first (a stable reorder: joints already after
    /// their parents keep their relative order). [`Skeleton::source_index`] maps back.
    ///
    /// Errors: no joints, more than [`MAX_JOINTS`], an empty or duplicate name, a parent index out
    /// of range, a cycle, a non-finite rest pose or inverse bind, a rest rotation that is not a
    /// unit quaternion (beyond 1e-3; nearly-unit ones are normalized), a zero rest scale, a
    /// rest pose or inverse bind whose model or skinning matrices reach past
    /// [`reach::MAX_REACH`].
    pub fn new(name: impl Into<String>, joints: Vec<JointDesc>) -> Result<Self> {
        let name = name.into();
        let shape = |what: String| Error::SkeletonShape {
            skeleton: name.clone(),
            what,
        };
        if joints.is_empty() {
            return Err(shape("has no joints".into()));
        }
        if joints.len() > MAX_JOINTS {
            return Err(shape(format!(
                "has {} joints, more than the limit of {MAX_JOINTS}",
                joints.len()
            )));
        }
        let joint_err = |i: usize, what: String| Error::Skeleton {
            skeleton: name.clone(),
            joint: i,
            joint_name: joints[i].name.clone(),
            what,
        };
        let mut seen = std::collections::HashMap::new();
        for (i, j) in joints.iter().enumerate() {
            if j.name.is_empty() {
                return Err(joint_err(i, "empty name".into()));
            }
            if let Some(prev) = seen.insert(j.name.as_str(), i) {
                return Err(joint_err(i, format!("duplicate name (also joint {prev})")));
            }
            if let Some(p) = j.parent {
                if p >= joints.len() {
                    return Err(joint_err(
                        i,
                        format!("parent index {p} out of range (0..{})", joints.len()),
                    ));
                }
                if p == i {
                    return Err(joint_err(i, "is its own parent".into()));
                }
            }
            if !j.rest.is_finite() {
                return Err(joint_err(i, "rest pose is not finite".into()));
            }
            let len = j.rest.rotation.length();
            if (len - 1.0).abs() > 1e-3 {
                return Err(joint_err(
                    i,
                    format!("rest rotation is not a unit quaternion (length {len})"),
                ));
            }
            if j.rest.scale.abs().min_element() < 1e-12 {
                return Err(joint_err(i, "rest scale has a zero component".into()));
            }
            if !j.inverse_bind.is_finite() {
                return Err(joint_err(i, "inverse bind matrix is not finite".into()));
            }
        }
        // Stable topological order: repeatedly emit joints whose parent is already emitted.
        let n = joints.len();
        let mut new_index = vec![usize::MAX; n];
        let mut order = Vec::with_capacity(n);
        let mut progressed = true;
        while order.len() < n && progressed {
            progressed = false;
            for i in 0..n {
                if new_index[i] != usize::MAX {
                    continue;
                }
                let ready = match joints[i].parent {
                    None => true,
                    Some(p) => new_index[p] != usize::MAX,
                };
                if ready {
                    new_index[i] = order.len();
                    order.push(i);
                    progressed = true;
                }
            }
        }
        if order.len() < n {
            let stuck = (0..n).find(|&i| new_index[i] == usize::MAX).unwrap_or(0);
            return Err(joint_err(stuck, "is part of a parent cycle".into()));
        }
        let skeleton = Self {
            names: order.iter().map(|&i| joints[i].name.clone()).collect(),
            parents: order
                .iter()
                .map(|&i| joints[i].parent.map(|p| new_index[p] as u32))
                .collect(),
            rest: order
                .iter()
                .map(|&i| {
                    let mut r = joints[i].rest;
                    r.rotation = r.rotation.normalize();
                    r
                })
                .collect(),
            inverse_binds: order.iter().map(|&i| joints[i].inverse_bind).collect(),
            source_index: order,
            name,
            sockets: Vec::new(),
            ik_chains: Vec::new(),
        };
        skeleton.check_rest_reach()?;
        Ok(skeleton)
    }

    /// Each joint's extent in the rest pose ([`crate::reach`]).
    pub(crate) fn rest_extents(&self) -> Vec<Extent> {
        self.rest
            .iter()
            .map(|r| reach::pose_extent(r.translation.extend(0.0), r.scale.extend(0.0)))
            .collect()
    }

    /// The model and skinning reach of every joint whose local poses stay within `local`, with
    /// additive layers of extents `additive` on top ([`reach::check`]); `Err((joint, what))`
    /// for the first joint past [`reach::MAX_REACH`].
    pub(crate) fn reach(
        &self,
        local: &[Extent],
        additive: &[&[Extent]],
    ) -> std::result::Result<Vec<reach::JointReach>, (usize, String)> {
        let frame = reach::Frame {
            parents: &self.parents,
            inverse_binds: &self.inverse_binds,
            sockets: self.sockets.iter().map(|s| (s.joint, s.offset.to_mat4())).collect(),
        };
        reach::check(&frame, local, additive)
    }

    /// Refuses a rest pose, inverse bind or socket that reaches past [`reach::MAX_REACH`].
    fn check_rest_reach(&self) -> Result<()> {
        self.reach(&self.rest_extents(), &[])
            .map(|_| ())
            .map_err(|(j, what)| Error::Skeleton {
                skeleton: self.name.clone(),
                joint: self.source_index[j],
                joint_name: self.names[j].clone(),
                what: format!("in the rest pose, {what}"),
            })
    }

    /// Builds a skeleton whose inverse bind matrices are the inverses of its rest pose in model
    /// space (so the palette is the identity in the rest pose).
    pub fn from_rest_pose(name: impl Into<String>, joints: Vec<(String, Option<usize>, Transform)>) -> Result<Self> {
        let descs: Vec<JointDesc> = joints
            .into_iter()
            .map(|(name, parent, rest)| JointDesc {
                name,
                parent,
                rest,
                inverse_bind: Mat4::IDENTITY,
            })
            .collect();
        let mut s = Self::new(name, descs)?;
        let model = s.rest_model_matrices();
        s.inverse_binds = model.iter().map(|m| m.inverse()).collect();
        s.check_rest_reach()?;
        Ok(s)
    }

    /// The skeleton's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Number of joints.
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.names.len()
    }
    /// Joint names, parents-first order.
    #[must_use]
    pub fn joint_names(&self) -> &[String] {
        &self.names
    }
    /// Parent of each joint (always a smaller index), `None` for roots.
    #[must_use]
    pub fn parents(&self) -> &[Option<u32>] {
        &self.parents
    }
    /// Rest pose, local to each parent.
    #[must_use]
    pub fn rest_pose(&self) -> &[Transform] {
        &self.rest
    }
    /// Inverse bind matrices.
    #[must_use]
    pub fn inverse_binds(&self) -> &[Mat4] {
        &self.inverse_binds
    }
    /// For each joint, its index in the list given to [`Skeleton::new`].
    #[must_use]
    pub fn source_index(&self) -> &[usize] {
        &self.source_index
    }
    /// Index of the joint called `name`.
    #[must_use]
    pub fn joint_index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
    /// Adds a socket called `name` that follows joint `joint` with `offset` (`joint_from_socket`,
    /// for example a grip's position and orientation in the hand's frame); returns its index.
    ///
    /// Errors (nothing added): an empty name or one already used, a joint the skeleton lacks,
    /// an offset that is not finite or whose rotation is not a unit quaternion (beyond 1e-3), an
    /// offset that reaches past [`reach::MAX_REACH`] in the rest pose, or
    /// [`MAX_SOCKETS`] sockets already.
    pub fn add_socket(&mut self, name: &str, joint: &str, offset: Transform) -> Result<usize> {
        let err = |what: String| Error::SkeletonShape {
            skeleton: self.name.clone(),
            what: format!("socket '{name}': {what}"),
        };
        if name.is_empty() || self.sockets.iter().any(|s| s.name == name) {
            return Err(err("needs a name of its own".into()));
        }
        let j = self
            .joint_index(joint)
            .ok_or_else(|| err(format!("joint '{joint}' does not exist")))?;
        let finite = offset.translation.is_finite() && offset.rotation.is_finite() && offset.scale.is_finite();
        if !finite || (offset.rotation.length() - 1.0).abs() > 1e-3 {
            return Err(err(format!("offset {offset:?} must be finite with a unit rotation")));
        }
        if self.sockets.len() >= MAX_SOCKETS {
            return Err(err(format!(
                "the skeleton already has {MAX_SOCKETS} sockets, the most it may have"
            )));
        }
        self.sockets.push(Socket {
            name: name.to_owned(),
            joint: j,
            offset: Transform {
                rotation: offset.rotation.normalize(),
                ..offset
            },
        });
        if let Err((j, what)) = self.reach(&self.rest_extents(), &[]) {
            self.sockets.pop();
            return Err(err(format!("on joint '{}' in the rest pose, {what}", self.names[j])));
        }
        Ok(self.sockets.len() - 1)
    }

    /// The sockets, in the order added.
    #[must_use]
    pub fn sockets(&self) -> &[Socket] {
        &self.sockets
    }

    /// Index of the socket called `name`.
    #[must_use]
    pub fn socket_index(&self, name: &str) -> Option<usize> {
        self.sockets.iter().position(|s| s.name == name)
    }

    /// Adds an IK chain ([`IkChain`]: two-bone or aim) that characters can give goals to
    /// ([`crate::gpu::Controller::set_ik_goal`]); returns its index. Its axes are normalized.
    ///
    /// Errors (nothing added): an empty name or one already used, [`MAX_IK_CHAINS`] chains
    /// already, a joint the skeleton lacks, joints that are not a chain (each must be a proper
    /// ancestor of the next: a two-bone chain's start of mid, mid of end; an aim chain's each
    /// joint of the one before it, at most [`crate::ik::MAX_AIM_JOINTS`]), a bone of zero length
    /// in the rest pose, an axis, pole or up of zero length or not finite, a soften outside
    /// [0, 1], a joint weight outside [0, 1], a twist that is not finite, a pelvis that is not
    /// an ancestor of its chain's start or not the one other chains name.
    pub fn add_ik_chain(&mut self, chain: IkChain) -> Result<usize> {
        let name = chain.name.clone();
        let err = |what: String| Error::SkeletonShape {
            skeleton: self.name.clone(),
            what: format!("IK chain '{name}': {what}"),
        };
        if chain.name.is_empty() || self.ik_chains.iter().any(|c| c.name == chain.name) {
            return Err(err("needs a name of its own".into()));
        }
        if self.ik_chains.len() >= MAX_IK_CHAINS {
            return Err(err(format!(
                "the skeleton already has {MAX_IK_CHAINS} IK chains, the most it may have"
            )));
        }
        let chain = validate_ik_chain(self, chain).map_err(err)?;
        self.ik_chains.push(chain);
        Ok(self.ik_chains.len() - 1)
    }

    /// The IK chains, in the order added.
    #[must_use]
    pub fn ik_chains(&self) -> &[IkChain] {
        &self.ik_chains
    }

    /// Index of the IK chain called `name`.
    #[must_use]
    pub fn ik_chain_index(&self, name: &str) -> Option<usize> {
        self.ik_chains.iter().position(|c| c.name == name)
    }

    /// Whether joint `j` is `ancestor` or below it.
    #[must_use]
    pub fn is_descendant(&self, j: usize, ancestor: usize) -> bool {
        let mut p = Some(j as u32);
        while let Some(q) = p {
            if q as usize == ancestor {
                return true;
            }
            if (q as usize) < ancestor {
                return false;
            }
            p = self.parents.get(q as usize).copied().flatten();
        }
        false
    }

    /// Depth of each joint (roots are 0).
    #[must_use]
    pub fn depths(&self) -> Vec<u32> {
        let mut d = vec![0u32; self.parents.len()];
        for i in 0..d.len() {
            if let Some(p) = self.parents[i] {
                d[i] = d[p as usize] + 1;
            }
        }
        d
    }

    /// The joints ordered by depth (roots first, ties by index): the order in which the fused
    /// pass walks the hierarchy a level at a time, the joints of a level on threads of their own.
    #[must_use]
    pub fn depth_order(&self) -> Vec<u32> {
        let depths = self.depths();
        let mut order: Vec<u32> = (0..depths.len() as u32).collect();
        order.sort_by_key(|&j| depths[j as usize]);
        order
    }

    /// How many joints each level of the hierarchy holds: `level_widths()[d]` joints have depth
    /// `d`, and there are `level_widths().len()` levels (none for an empty skeleton). The fused
    /// pass takes a step per level, with as many threads busy as the level is wide.
    #[must_use]
    pub fn level_widths(&self) -> Vec<u32> {
        let mut widths = Vec::new();
        for d in self.depths() {
            let d = d as usize;
            if widths.len() <= d {
                widths.resize(d + 1, 0);
            }
            widths[d] += 1;
        }
        widths
    }

    /// The rest pose in model space (`model_from_joint`).
    #[must_use]
    pub fn rest_model_matrices(&self) -> Vec<Mat4> {
        let mut m: Vec<Mat4> = Vec::with_capacity(self.rest.len());
        for (i, r) in self.rest.iter().enumerate() {
            let local = r.to_mat4();
            m.push(match self.parents[i] {
                Some(p) => m[p as usize] * local,
                None => local,
            });
        }
        m
    }
}

fn unit(v: glam::Vec3, what: &str) -> std::result::Result<glam::Vec3, String> {
    let n = v.normalize_or_zero();
    if !v.is_finite() || n == glam::Vec3::ZERO || !n.is_finite() {
        return Err(format!("{what} {v} must be finite and not zero"));
    }
    Ok(n)
}

/// Checks `chain` against `skeleton` and normalizes its axes ([`Skeleton::add_ik_chain`]
/// documents what is refused).
fn validate_ik_chain(skeleton: &Skeleton, mut chain: IkChain) -> std::result::Result<IkChain, String> {
    let n = skeleton.joint_count();
    let names = skeleton.joint_names();
    let joint = |j: usize, role: &str| -> std::result::Result<(), String> {
        if j < n {
            Ok(())
        } else {
            Err(format!("its {role} joint {j} does not exist ({n} joints)"))
        }
    };
    let rest = skeleton.rest_model_matrices();
    let bone = |from: usize, to: usize| -> std::result::Result<(), String> {
        if !skeleton.is_descendant(to, from) || to == from {
            return Err(format!(
                "'{}' is not below '{}': the joints are not a chain",
                names[to], names[from]
            ));
        }
        let d = rest[to].w_axis.truncate() - rest[from].w_axis.truncate();
        if d.length() <= 0.0 || d.is_nan() {
            return Err(format!(
                "the bone from '{}' to '{}' has zero length in the rest pose",
                names[from], names[to]
            ));
        }
        Ok(())
    };
    let angle = |a: f32, what: &str| -> std::result::Result<(), String> {
        if a.is_finite() {
            Ok(())
        } else {
            Err(format!("{what} {a} is not finite"))
        }
    };
    match &mut chain.kind {
        IkKind::TwoBone(c) => {
            joint(c.start, "start")?;
            joint(c.mid, "mid")?;
            joint(c.end, "end")?;
            bone(c.start, c.mid)?;
            bone(c.mid, c.end)?;
            c.mid_axis = unit(c.mid_axis, "mid axis")?;
            c.pole = unit(c.pole, "pole")?;
            angle(c.twist, "twist")?;
            if !(0.0..=1.0).contains(&c.soften) {
                return Err(format!("soften {} is outside [0, 1]", c.soften));
            }
            if let Some(p) = c.pelvis {
                joint(p, "pelvis")?;
                if p == c.start || !skeleton.is_descendant(c.start, p) {
                    return Err(format!(
                        "its pelvis '{}' is not above its start '{}'",
                        names[p], names[c.start]
                    ));
                }
                let other = skeleton.ik_chains().iter().find_map(|o| match &o.kind {
                    IkKind::TwoBone(t) => t.pelvis.filter(|&q| q != p),
                    IkKind::Aim(_) => None,
                });
                if let Some(q) = other {
                    return Err(format!(
                        "its pelvis '{}' is not '{}', the one other chains lower",
                        names[p], names[q]
                    ));
                }
            }
        }
        IkKind::Aim(c) => {
            if c.joints.is_empty() || c.joints.len() > MAX_AIM_JOINTS {
                return Err(format!(
                    "{} joints: an aim chain turns 1 to {MAX_AIM_JOINTS}",
                    c.joints.len()
                ));
            }
            for (i, &j) in c.joints.iter().enumerate() {
                joint(j, "aim")?;
                if i > 0 {
                    bone(j, c.joints[i - 1])?;
                }
            }
            c.forward = unit(c.forward, "forward")?;
            c.up = unit(c.up, "up")?;
            c.pole = unit(c.pole, "pole")?;
            if !c.offset.is_finite() {
                return Err(format!("offset {} is not finite", c.offset));
            }
            angle(c.twist, "twist")?;
            if !(0.0..=1.0).contains(&c.joint_weight) {
                return Err(format!("joint weight {} is outside [0, 1]", c.joint_weight));
            }
        }
    }
    Ok(chain)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn j(name: &str, parent: Option<usize>) -> JointDesc {
        JointDesc {
            name: name.into(),
            parent,
            rest: Transform::from_translation(Vec3::Y),
            inverse_bind: Mat4::IDENTITY,
        }
    }

    #[test]
    fn reorders_children_listed_before_parents() {
        let s = Skeleton::new("s", vec![j("hand", Some(2)), j("root", None), j("arm", Some(1))]).unwrap();
        assert_eq!(s.joint_names(), ["root", "arm", "hand"]);
        assert_eq!(s.parents(), [None, Some(0), Some(1)]);
        assert_eq!(s.source_index(), [1, 2, 0]);
    }

    #[test]
    fn rejects_cycles_duplicates_and_bad_parents() {
        let e = Skeleton::new("s", vec![j("a", Some(1)), j("b", Some(0))]).unwrap_err();
        assert!(e.to_string().contains("cycle"), "{e}");
        let e = Skeleton::new("s", vec![j("a", None), j("a", Some(0))]).unwrap_err();
        assert!(e.to_string().contains("duplicate"), "{e}");
        let e = Skeleton::new("s", vec![j("a", Some(7))]).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        assert!(Skeleton::new("s", vec![]).is_err());
        let mut bad = j("nan", None);
        bad.rest.translation.x = f32::NAN;
        let e = Skeleton::new("s", vec![bad]).unwrap_err();
        assert!(
            e.to_string().contains("'nan'") && e.to_string().contains("not finite"),
            "{e}"
        );
    }

    #[test]
    fn supports_long_chains_beyond_256_joints() {
        let joints: Vec<_> = (0..1500usize).map(|i| j(&format!("j{i}"), i.checked_sub(1))).collect();
        let s = Skeleton::new("chain", joints).unwrap();
        assert_eq!(s.joint_count(), 1500);
        let e = Skeleton::new("huge", (0..MAX_JOINTS + 1).map(|i| j(&format!("j{i}"), None)).collect()).unwrap_err();
        assert!(e.to_string().contains("limit"), "{e}");
    }
}
