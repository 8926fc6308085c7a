"""Our description of the MPI C API: what the C types in mpi.h cannot tell.

The exact signature of every function comes from the installed mpi.h (see gen_wrappers.py).
This file adds, per function name, the behaviour the shim needs to know. Names are given
without the MPI_/MPIX_ prefix; large-count variants (suffix _c) share the entry of their base
name, so 'Bcast' covers MPI_Bcast and MPI_Bcast_c.
"""

import re

# Collective operations: a fake communicator given to one of these may be replaced by a real
# communicator for the range (every member is inside the same call). Nonblocking (I...) and
# persistent (..._init) forms are derived from these names.
_COLLECTIVE_OPS = {
    'Barrier', 'Bcast', 'Gather', 'Gatherv', 'Scatter', 'Scatterv', 'Allgather', 'Allgatherv',
    'Alltoall', 'Alltoallv', 'Alltoallw', 'Reduce', 'Allreduce', 'Reduce_scatter',
    'Reduce_scatter_block', 'Scan', 'Exscan', 'Neighbor_allgather', 'Neighbor_allgatherv',
    'Neighbor_alltoall', 'Neighbor_alltoallv', 'Neighbor_alltoallw',
}

# Other calls that are collective over their first communicator argument.
_COLLECTIVE_OTHER = {
    'Comm_dup', 'Comm_dup_with_info', 'Comm_idup', 'Comm_idup_with_info', 'Comm_split',
    'Comm_split_type', 'Comm_create', 'Comm_set_info', 'Intercomm_create', 'Intercomm_merge',
    'Cart_create', 'Cart_sub', 'Graph_create', 'Dist_graph_create', 'Dist_graph_create_adjacent',
    'Win_create', 'Win_allocate', 'Win_allocate_shared', 'Win_create_dynamic', 'File_open',
    'Comm_accept', 'Comm_connect', 'Comm_spawn', 'Comm_spawn_multiple',
    'Comm_agree', 'Comm_shrink',  # MPIX_ fault tolerance (MPICH)
    'Stream_comm_create', 'Stream_comm_create_multiplex', 'Threadcomm_init',  # MPIX_ (MPICH)
}

# Calls that may wait for other processes, or that programs poll in a loop: while one of these
# runs on real handles, range operations must keep moving (the progress rule).
_BLOCKING_OTHER = {
    'Send', 'Bsend', 'Ssend', 'Rsend', 'Recv', 'Sendrecv', 'Sendrecv_replace', 'Probe',
    'Mprobe', 'Mrecv', 'Iprobe', 'Improbe',
    'Wait', 'Waitall', 'Waitany', 'Waitsome', 'Test', 'Testall', 'Testany', 'Testsome',
    'Request_get_status', 'Request_get_status_all', 'Request_get_status_any',
    'Request_get_status_some', 'Parrived',
    # buffered sends: flushing and detaching wait until the buffered messages are out
    'Buffer_detach', 'Buffer_flush', 'Comm_detach_buffer', 'Comm_flush_buffer',
    'Session_detach_buffer', 'Session_flush_buffer',
    'Comm_create_group', 'Comm_create_from_group', 'Intercomm_create_from_groups',
    'Comm_join', 'Comm_disconnect', 'Finalize',
    'Comm_revoke', 'Comm_failure_ack',
    # windows: synchronisation waits for the other side
    'Win_fence', 'Win_free', 'Win_start', 'Win_complete', 'Win_post', 'Win_wait', 'Win_test',
    'Win_lock', 'Win_unlock', 'Win_lock_all', 'Win_unlock_all', 'Win_flush', 'Win_flush_all',
    'Win_flush_local', 'Win_flush_local_all',
    # files: collective calls
    'File_close', 'File_set_view', 'File_set_size', 'File_preallocate', 'File_sync',
    'File_set_atomicity', 'File_set_info', 'File_seek_shared', 'File_read_all',
    'File_write_all', 'File_read_at_all', 'File_write_at_all', 'File_read_ordered',
    'File_write_ordered', 'File_read_all_begin', 'File_write_all_begin',
    'File_read_at_all_begin', 'File_write_at_all_begin', 'File_read_ordered_begin',
    'File_write_ordered_begin', 'File_read_all_end', 'File_write_all_end',
    'File_read_at_all_end', 'File_write_at_all_end', 'File_read_ordered_end',
    'File_write_ordered_end',
}

# How a blocking call keeps range operations moving while it runs on real handles (the
# progress rule, docs/shim-design.md). The generator writes rc_blocking_MPI_X for every
# blocking call in one of three ways:
# - 'twin': point-to-point calls whose nonblocking form (I + name, same parameters but the
#   status, then a request) matches what the peer calls: started, then waited for while core
#   advances. Used only where the installed mpi.h declares that form.
# - 'poll': calls a program polls in a loop: each poll advances core first.
# - 'helper': everything else (collectives, whose blocking and nonblocking forms never match
#   each other, creation, files, windows): MPI's call as it is, while a helper thread advances
#   core when MPI allows a second thread in it.
# The calls named in _PROGRESS_BY_HAND (exact names) are written by hand in shim/src/requests/
# (progress_rule.cpp, completion.cpp) and shim/src/operations/partitioned.cpp.
# Not MPI_Sendrecv_replace: MPICH's MPI_Isendrecv_replace (4.0.2 and 4.2.1) reports the wrong
# source of an MPI_ANY_SOURCE receive (tests/conformance/native_defects.c,
# isendrecv-replace-any), so it takes the helper.
_PROGRESS_TWIN = {'Send', 'Bsend', 'Ssend', 'Rsend', 'Recv', 'Mrecv'}
_PROGRESS_POLL = {'Iprobe', 'Improbe', 'Win_test'}
_PROGRESS_BY_HAND = {
    'MPI_Probe', 'MPI_Mprobe',  # wait by polling the probe itself (no nonblocking twin)
    'MPI_Sendrecv', 'MPI_Sendrecv_c',  # Isend + Irecv (MPI_Isendrecv: MPI-4, see above)
    'MPI_Wait', 'MPI_Test', 'MPI_Request_get_status',  # requests/completion.cpp
    'MPI_Parrived',  # operations/partitioned.cpp
}


def progress_kind(name):
    """'hand', 'twin', 'poll' or 'helper' for a blocking call (see _PROGRESS_TWIN)."""
    if name in _PROGRESS_BY_HAND:
        return 'hand'
    stem = base_name(name)
    if stem in _PROGRESS_TWIN:
        return 'twin'
    return 'poll' if stem in _PROGRESS_POLL else 'helper'


def twin_name(name):
    """'MPI_Send_c' -> 'MPI_Isend_c'."""
    prefix, stem = re.match(r'(MPIX?_)(.*)', name).groups()
    return prefix + 'I' + stem[0].lower() + stem[1:]


# Calls wrapped although no parameter is a communicator, request, message or status: the
# blocking ones above (progress rule) and these, whose effects the semantics half must see.
_EXTRA_WRAPPED = {
    'Init', 'Init_thread', 'Finalize',
    'Query_thread',  # the level the program asked for, where the library asked MPI for more
    'Comm_create_keyval', 'Comm_free_keyval', 'Keyval_create', 'Keyval_free',
    'Comm_create_errhandler', 'Errhandler_create', 'Errhandler_free',
    'Error_string',  # the library's messages (MPICH 4.0 does not return added strings)
}

# The generated MPI_X only calls rc_hand_MPI_X (whose weak default behaves like any generated
# wrapper): request arrays and completion, status readers, and calls that create, free or
# convert communicators.
_HANDWRITTEN = {
    'Wait', 'Test', 'Waitall', 'Waitany', 'Waitsome', 'Testall', 'Testany', 'Testsome',
    'Startall', 'Request_get_status', 'Request_get_status_all', 'Request_get_status_any',
    'Request_get_status_some', 'Request_free', 'Cancel',
    'Get_count', 'Get_elements', 'Get_elements_x', 'Test_cancelled', 'Status_set_elements',
    'Status_set_elements_x', 'Status_set_cancelled',
    'Comm_dup', 'Comm_dup_with_info', 'Comm_idup', 'Comm_idup_with_info', 'Comm_split',
    'Comm_split_type', 'Comm_create', 'Comm_create_group', 'Comm_create_from_group',
    'Intercomm_create', 'Intercomm_create_from_groups', 'Intercomm_merge', 'Cart_create',
    'Cart_sub', 'Graph_create', 'Dist_graph_create', 'Dist_graph_create_adjacent',
    'Comm_accept', 'Comm_connect', 'Comm_spawn', 'Comm_spawn_multiple', 'Comm_join',
    'Comm_get_parent', 'Comm_free', 'Comm_disconnect',
    'Comm_c2f', 'Comm_f2c', 'Request_c2f', 'Request_f2c', 'Message_c2f', 'Message_f2c',
} | _EXTRA_WRAPPED

# Calls that change what the library caches of MPI_COMM_WORLD: on a real communicator the
# generated wrapper reports the change after MPI's call (shim/src/base/errhandler_cache.h), so that
# the error handler and the hints kept for the world (inherited by new communicators) are known
# to be stale. Maps the call to the function it calls.
_REPORTS_CHANGE = {'Comm_set_errhandler': 'errhandler_set', 'Errhandler_set': 'errhandler_set',
                   'Comm_set_info': 'info_set'}


def change_report(name):
    """The rcshim function the wrapper of `name` calls after MPI's call, or None."""
    return _REPORTS_CHANGE.get(base_name(name))


# Pointer parameters whose current value is read (in-out); every other pointer to a handle is
# an output and is never read. Maps the function to the handle types read through pointers.
_INOUT = {
    'Comm_free': {'MPI_Comm'}, 'Comm_disconnect': {'MPI_Comm'},
    'Start': {'MPI_Request'}, 'Wait': {'MPI_Request'}, 'Test': {'MPI_Request'},
    'Request_free': {'MPI_Request'}, 'Cancel': {'MPI_Request'},
    'Mrecv': {'MPI_Message'}, 'Imrecv': {'MPI_Message'},
}

# Exported by some MPI libraries but declared in no mpi.h we parse, and safe to leave alone:
# the predefined attribute callbacks (MPI calls them; they never look at the communicator),
# Fortran helpers and data symbols.
NOT_WRAPPED_EXPORTS = {
    'MPI_COMM_DUP_FN', 'MPI_COMM_NULL_COPY_FN', 'MPI_COMM_NULL_DELETE_FN', 'MPI_DUP_FN',
    'MPI_NULL_COPY_FN', 'MPI_NULL_DELETE_FN', 'MPI_TYPE_DUP_FN', 'MPI_TYPE_NULL_COPY_FN',
    'MPI_TYPE_NULL_DELETE_FN', 'MPI_WIN_DUP_FN', 'MPI_WIN_NULL_COPY_FN',
    'MPI_WIN_NULL_DELETE_FN', 'MPI_CONVERSION_FN_NULL',
    'MPI_AINT_ADD_F90', 'MPI_AINT_DIFF_F90', 'MPI_WTICK_F90', 'MPI_WTIME_F90',
    'MPI_F_STATUS_IGNORE', 'MPI_F_STATUSES_IGNORE', 'MPI_F08_STATUS_IGNORE',
    'MPI_F08_STATUSES_IGNORE', 'MPI_T_PVAR_ALL_HANDLES', 'MPI_UNWEIGHTED',
    'MPI_WEIGHTS_EMPTY',
}

# Preprocessor settings for parsing and compiling: Open MPI then declares the MPI-1 calls that
# it still exports (MPI_Errhandler_set takes a communicator), and C++ bindings stay out.
MPI_H_DEFINES = ['OMPI_SKIP_MPICXX=1', 'MPICH_SKIP_MPICXX=1', 'OMPI_OMIT_MPI1_COMPAT_DECLS=0']


def base_name(name):
    """'MPI_Ibcast_c' -> 'Ibcast'; 'MPIX_Comm_agree' -> 'Comm_agree'."""
    stem = re.sub(r'^P?MPIX?_', '', name)
    return stem[:-2] if stem.endswith('_c') else stem


def _collective_op(stem):
    """The blocking collective a name derives from ('Ibcast', 'Bcast_init' -> 'Bcast')."""
    if stem.endswith('_init') and stem[:-5] in _COLLECTIVE_OPS:
        return stem[:-5]
    if stem.startswith('I') and stem[1:].capitalize() in _COLLECTIVE_OPS:
        return stem[1:].capitalize()
    return stem if stem in _COLLECTIVE_OPS else None


def is_collective(name):
    stem = base_name(name)
    return _collective_op(stem) is not None or stem in _COLLECTIVE_OTHER


def is_blocking(name):
    stem = base_name(name)
    if stem in _COLLECTIVE_OPS or stem in _BLOCKING_OTHER:
        return True
    # persistent collective initialisation is collective and may synchronise
    if stem.endswith('_init') and stem[:-5] in _COLLECTIVE_OPS:
        return True
    # creation and the other collectives except the nonblocking ones (Comm_idup)
    return stem in _COLLECTIVE_OTHER and stem not in ('Comm_idup', 'Comm_idup_with_info')


def is_handwritten(name):
    return base_name(name) in _HANDWRITTEN


def wrapped_without_handles(name):
    stem = base_name(name)
    return stem in _EXTRA_WRAPPED or is_blocking(name)


def inout_types(name):
    return _INOUT.get(base_name(name), set())


# The Fortran bindings (tools/gen_fortran.py). The library defines the Fortran entry points of
# every function whose C form reads a communicator, request or message; what follows is what
# the C signature does not tell about the Fortran one.

# Written by hand in shim/src/fortran/ (the attribute value is an integer in Fortran, not a
# pointer; the keyval and error handler calls carry Fortran callbacks the library must call
# the Fortran way; spawn's argv is an array of Fortran strings). They need not take a handle.
FORTRAN_HANDWRITTEN = {
    'Comm_get_attr', 'Comm_set_attr', 'Attr_get', 'Attr_put',
    'Comm_create_keyval', 'Keyval_create', 'Comm_create_errhandler', 'Errhandler_create',
    'Comm_spawn', 'Comm_spawn_multiple',
}

# Statements run after the C call, with {i} the name of the C function's i-th parameter:
# indices that Fortran numbers from 1 where C numbers from 0.
_FORTRAN_AFTER = {
    'Waitany': ['if (*{2} >= 0) ++*{2};'],
    'Testany': ['if (*{2} >= 0) ++*{2};'],
    'Request_get_status_any': ['if (*{2} >= 0) ++*{2};'],
    'Waitsome': ['rcshim::fortran_indices({3}, *{2});'],
    'Testsome': ['rcshim::fortran_indices({3}, *{2});'],
    'Request_get_status_some': ['rcshim::fortran_indices({3}, *{2});'],
}

# How many statuses of an array the call writes, where not all (`{i}` as above).
_FORTRAN_STATUSES_WRITTEN = {'Waitsome': '*{2}', 'Testsome': '*{2}',
                             'Request_get_status_some': '*{2}'}

# The length of an array of datatypes, given per process of the communicator (fortran_peers in
# shim/src/fortran/support.h: 'all' processes, or a topology's 'sources' or 'destinations').
_FORTRAN_ARRAY_LENGTH = {
    'sendtypes': 'rcshim::Peers::all', 'recvtypes': 'rcshim::Peers::all',
}
_FORTRAN_NEIGHBOR_LENGTH = {
    'sendtypes': 'rcshim::Peers::destinations', 'recvtypes': 'rcshim::Peers::sources',
}


def fortran_after(name):
    return _FORTRAN_AFTER.get(base_name(name), [])


def fortran_statuses_written(name):
    return _FORTRAN_STATUSES_WRITTEN.get(base_name(name))


def fortran_array_length(name, param):
    stem = base_name(name)
    neighbor = 'eighbor_' in stem
    return (_FORTRAN_NEIGHBOR_LENGTH if neighbor else _FORTRAN_ARRAY_LENGTH).get(param)
