// Linux interfaces that Swift's Glibc module does not export. Only the Posix layer of
// StopWatchCore imports this module.
#ifndef CLINUX_H
#define CLINUX_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>

#endif
