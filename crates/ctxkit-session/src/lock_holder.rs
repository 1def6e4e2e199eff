//! Who holds a file's advisory lock: read from Linux's `/proc/locks`, so a refused writer can name
//! the process in its way ("in use by PID 1234"). Best effort: elsewhere, or when the table cannot be
//! read, the holder is unknown.

use std::fs::File;

/// The PID holding a `flock` lock on `file`, if the system says.
pub(crate) fn lock_holder(file: &File) -> Option<u32> {
    let table = std::fs::read_to_string("/proc/locks").ok()?;
    let identity = identity(file)?;
    holder_in(&table, identity)
}

/// The device (major, minor) and inode of an open file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    major: u64,
    minor: u64,
    inode: u64,
}

#[cfg(unix)]
fn identity(file: &File) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    let metadata = file.metadata().ok()?;
    let device = metadata.dev();
    // glibc's `major`/`minor` encoding of `dev_t`.
    let major = ((device >> 8) & 0xfff) | ((device >> 32) & !0xfff);
    let minor = (device & 0xff) | ((device >> 12) & !0xff);
    Some(Identity {
        major,
        minor,
        inode: metadata.ino(),
    })
}

#[cfg(not(unix))]
fn identity(_file: &File) -> Option<Identity> {
    None
}

/// Finds the holder of a granted `FLOCK` lock on `identity` in the text of `/proc/locks`
/// (`1: FLOCK  ADVISORY  WRITE 1234 fe:00:5308951 0 EOF`; waiters are marked `->` and skipped).
/// An entry on the same inode whose device differs (stacked filesystems report other devices) is used
/// only when no entry matches exactly.
fn holder_in(table: &str, identity: Identity) -> Option<u32> {
    let mut same_inode = None;
    for line in table.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, kind, _, _, pid, location, ..] = fields.as_slice() else {
            continue;
        };
        if *kind != "FLOCK" {
            continue;
        }
        let mut parts = location.split(':');
        let (Some(major), Some(minor), Some(inode)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (Ok(major), Ok(minor), Ok(inode), Ok(pid)) = (
            u64::from_str_radix(major, 16),
            u64::from_str_radix(minor, 16),
            inode.parse::<u64>(),
            pid.parse::<u32>(),
        ) else {
            continue;
        };
        if inode != identity.inode {
            continue;
        }
        if major == identity.major && minor == identity.minor {
            return Some(pid);
        }
        same_inode.get_or_insert(pid);
    }
    same_inode
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: Identity = Identity {
        major: 0xfe,
        minor: 0,
        inode: 5_308_951,
    };

    #[test]
    fn finds_the_granted_flock_holder() {
        let table = "1: POSIX  ADVISORY  WRITE 77 fe:00:5308951 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 13069 fe:00:5308951 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 555 fe:00:5308951 0 EOF\n\
                     3: FLOCK  ADVISORY  READ 42 fe:00:10133507 0 EOF\n";
        assert_eq!(holder_in(table, FILE), Some(13069));
    }

    #[test]
    fn prefers_the_exact_device_and_falls_back_to_the_inode() {
        let table = "1: FLOCK  ADVISORY  WRITE 1 00:2c:5308951 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 2 fe:00:5308951 0 EOF\n";
        assert_eq!(holder_in(table, FILE), Some(2));
        let other_device = "1: FLOCK  ADVISORY  WRITE 1 00:2c:5308951 0 EOF\n";
        assert_eq!(holder_in(other_device, FILE), Some(1));
        assert_eq!(holder_in("garbage\n\n1: FLOCK x\n", FILE), None);
    }

    #[test]
    fn names_this_process_for_its_own_lock() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("f");
        let file = File::create(&path).unwrap();
        file.lock().unwrap();
        let other = File::open(&path).unwrap();
        if std::path::Path::new("/proc/locks").exists() {
            assert_eq!(lock_holder(&other), Some(std::process::id()));
        }
    }
}
