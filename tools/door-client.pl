# What tools/door-hook and tools/door-pipe share: the request's strings, the folder they run
# in and the door's socket, without Perl's Socket and Cwd modules (with Carp, Exporter and an
# XS library they were ~12 ms of every hook's start and every MCP join, §14).
use strict;

# A JSON string of bytes: the door reads the request as UTF-8, as it does the Node client's.
sub json {
  my ($s) = @_;
  $s =~ s/(["\\])/\\$1/g;
  $s =~ s/([\x00-\x1f])/sprintf('\\u%04x', ord $1)/ge;
  return qq("$s");
}

# The folder this runs in, as Cwd::getcwd says it (Linux's /proc first), or ''.
sub here_folder {
  my $cwd = readlink '/proc/self/cwd';
  return $cwd if defined $cwd && substr($cwd, 0, 1) eq '/' && -d $cwd;
  return '' unless eval { require Cwd; 1 };
  $cwd = Cwd::getcwd();
  return defined $cwd ? $cwd : '';
}

# A socket connected to the door at $path; undef with $! set when it cannot be reached, and
# 'no Socket' when it was not reached and this perl has no Socket module. Linux's AF_UNIX and
# SOCK_STREAM are 1 and its sockaddr_un a 16-bit family and 108 bytes of path: where they are
# not, this socket or its connect fails and the Socket module's are used.
sub door_connect {
  my ($path) = @_;
  my $sock;
  if ($^O eq 'linux' && length($path) < 108) {
    return $sock if socket($sock, 1, 1, 0) && connect($sock, pack('S Z108', 1, $path));
    close $sock if defined $sock;
    undef $sock;
  }
  my $err = $!;
  return 'no Socket' unless eval { require Socket; 1 };
  $! = $err;
  return $sock
    if socket($sock, Socket::AF_UNIX(), Socket::SOCK_STREAM(), 0) && connect($sock, Socket::pack_sockaddr_un($path));
  return undef;
}

1;
